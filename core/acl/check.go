package acl

import (
	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/resp"
)

// Reason is the outcome of a permission check, with Redis' ACL_DENIED_*
// values and order: when no selector allows a command, the largest reason
// (then the largest argument index) is reported.
type Reason int

// Reasons, as in Redis 7.0 (server.h).
const (
	OK            Reason = 0
	DeniedCommand Reason = 1
	DeniedKey     Reason = 2
	DeniedAuth    Reason = 3
	DeniedChannel Reason = 4
)

// String is the reason as ACL LOG shows it.
func (r Reason) String() string {
	switch r {
	case DeniedCommand:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedChannel:
		return "channel"
	case DeniedAuth:
		return "auth"
	}
	return "unknown"
}

// NoPermError is the error reply for a denied command (processCommand's
// texts), without the leading '-'.
func NoPermError(r Reason, cmd *command.Command) string {
	switch r {
	case DeniedCommand:
		return "NOPERM this user has no permissions to run the '" + cmd.FullName + "' command"
	case DeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case DeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "no permission"
}

// loadKeys appends the command's key positions and spec flags to pos and
// flags (Redis' getKeysFromCommandWithSpecs with GET_KEYSPEC_DEFAULT).
func loadKeys(cmd *command.Command, args [][]byte, pos []int, flags []command.KeyFlag) ([]int, []command.KeyFlag) {
	p, f, ok := cmd.KeysWithFlags(args, pos, flags)
	if !ok {
		// A spec that cannot be evaluated statically: the legacy positions,
		// each needing every access any of the command's specs declares.
		var all command.KeyFlag
		for _, ks := range cmd.KeySpecs {
			if ks.Flags&command.KeyNotKey == 0 {
				all |= ks.Flags
			}
		}
		p = cmd.Keys(args, pos)
		f = flags
		for range p {
			f = append(f, all)
		}
	}
	if cmd.FullName == "set" && len(f) == 1 && f[0]&command.KeyVariableFlags != 0 {
		// Redis resolves SET's variable flags with setGetKeys: read-write
		// with GET, otherwise an overwrite that needs only write access.
		f[0] = command.KeyOW | command.KeyUpdate
		for _, a := range args[min(3, len(args)):] {
			if resp.EqualFold(a, "get") {
				f[0] = command.KeyRW | command.KeyAccess | command.KeyUpdate
			}
		}
	}
	n := 0
	for i := range p { // Redis leaves NOT_KEY specs out
		if f[i]&command.KeyNotKey == 0 {
			p[n], f[n] = p[i], f[i]
			n++
		}
	}
	return p[:n], f[:n]
}

// Check is ACLCheckAllUserCommandPerm: whether the user may run cmd (the
// resolved subcommand when there is one) with args (args[0] is the command
// name). On denial it returns the reason and the index in args of the key
// or channel at fault (0 for a command denial). It allocates nothing for
// commands with up to 16 keys.
func (u *User) Check(cmd *command.Command, args [][]byte) (Reason, int) {
	s := u.state.Load()
	if s.allowAll {
		return OK, 0
	}
	var pbuf [16]int
	var fbuf [16]command.KeyFlag
	var pos []int
	var flags []command.KeyFlag
	if u.ix.hasKeys[cmd.ID] {
		for _, sel := range s.selectors {
			if !sel.allKeys { // Redis computes the keys once, when a selector needs them
				pos, flags = loadKeys(cmd, args, pbuf[:0], fbuf[:0])
				break
			}
		}
	}
	relevant, lastIdx := DeniedCommand, 0
	for _, sel := range s.selectors {
		r, idx := u.ix.checkSelector(sel, cmd, args, pos, flags)
		if r == OK {
			if i := sortPatternArg(cmd, args); i > 0 && !s.fullKeyRead() {
				return DeniedKey, i
			}
			return OK, 0
		}
		if r > relevant || (r == relevant && idx > lastIdx) {
			relevant, lastIdx = r, idx
		}
	}
	return relevant, lastIdx
}

// checkSelector is ACLSelectorCheckCmd.
func (ix *cmdIndex) checkSelector(sel *selector, cmd *command.Command, args [][]byte, pos []int, flags []command.KeyFlag) (Reason, int) {
	if !sel.allCommands && cmd.Flags&command.FlagNoAuth == 0 && !getBit(sel.bits, cmd.ID) {
		fa := sel.firstArgs[cmd.ID]
		idx := 1
		if cmd.Parent != nil {
			idx = 2
		}
		if len(args) < 2 || len(fa) == 0 || idx >= len(args) {
			return DeniedCommand, 0
		}
		found := false
		for _, f := range fa {
			if resp.EqualFold(args[idx], f) {
				found = true
				break
			}
		}
		if !found {
			return DeniedCommand, 0
		}
	}
	if !sel.allKeys && ix.hasKeys[cmd.ID] {
		for i, p := range pos {
			if !sel.keyAllowed(args[p], flags[i]) {
				return DeniedKey, p
			}
		}
	}
	if !sel.allChannels {
		switch ix.chanKind[cmd.ID] {
		case chanFirst:
			if len(args) > 1 && !sel.channelAllowed(args[1], false) {
				return DeniedChannel, 1
			}
		case chanAll, chanAllLiteral:
			for j := 1; j < len(args); j++ {
				if !sel.channelAllowed(args[j], ix.chanKind[cmd.ID] == chanAllLiteral) {
					return DeniedChannel, j
				}
			}
		}
	}
	return OK, 0
}

// keyAllowed is ACLSelectorCheckKey.
func (sel *selector) keyAllowed(key []byte, ks command.KeyFlag) bool {
	if sel.allKeys {
		return true
	}
	var need uint8
	if ks&command.KeyAccess != 0 {
		need |= permRead
	}
	if ks&(command.KeyInsert|command.KeyDelete|command.KeyUpdate) != 0 {
		need |= permWrite
	}
	for _, p := range sel.keys {
		if p.flags&need != need {
			continue
		}
		if glob.Match([]byte(p.pattern), key, false) {
			return true
		}
	}
	return false
}

// channelAllowed is ACLCheckChannelAgainstList; literal compares patterns
// (PSUBSCRIBE's arguments) as strings.
func (sel *selector) channelAllowed(ch []byte, literal bool) bool {
	if sel.allChannels {
		return true
	}
	for _, p := range sel.channels {
		if literal {
			if p == string(ch) {
				return true
			}
		} else if glob.Match([]byte(p), ch, false) {
			return true
		}
	}
	return false
}

// ChannelAllowed is ACLUserCheckChannelPerm: whether some selector of the
// user allows the channel (or, literal, the pattern).
func (u *User) ChannelAllowed(ch []byte, literal bool) bool {
	for _, sel := range u.state.Load().selectors {
		if sel.channelAllowed(ch, literal) {
			return true
		}
	}
	return false
}

// sortPatternArg returns the index in args of SORT's or SORT_RO's first BY
// pattern containing '*' or GET pattern, 0 when there is none: such patterns
// name keys from data, which no key check sees.
func sortPatternArg(cmd *command.Command, args [][]byte) int {
	if cmd.FullName != "sort" && cmd.FullName != "sort_ro" {
		return 0
	}
	for j := 2; j+1 < len(args); j++ {
		switch {
		case resp.EqualFold(args[j], "limit"):
			j += 2
		case resp.EqualFold(args[j], "store"):
			j++
		case resp.EqualFold(args[j], "by"):
			for _, ch := range args[j+1] {
				if ch == '*' {
					return j + 1
				}
			}
			j++
		case resp.EqualFold(args[j], "get"):
			return j + 1
		}
	}
	return 0
}

// fullKeyRead is Redis' ACLUserCheckKeyPerm(user, "*", 1, CMD_KEY_ACCESS),
// which SORT asks before it reads keys named by BY and GET patterns: some
// selector reads every key (allkeys, or a read pattern matching "*").
func (s *userState) fullKeyRead() bool {
	for _, sel := range s.selectors {
		if sel.keyAllowed([]byte("*"), command.KeyAccess) {
			return true
		}
	}
	return false
}
