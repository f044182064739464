package acl

import (
	"crypto/sha256"
	"encoding/hex"
	"math/bits"
	"strings"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/resp"
)

// RuleError is why an ACL rule was refused; its text is Redis'
// (ACLSetUserStringError).
type RuleError int

// Rule errors, named after the errno values acl.c uses for them.
const (
	ErrUnknownCommand  RuleError = iota + 1 // ENOENT
	ErrSyntax                               // EINVAL
	ErrKeyAfterAll                          // EEXIST
	ErrChannelAfterAll                      // EISDIR
	ErrNoSuchPassword                       // ENODEV
	ErrBadHash                              // EBADMSG
	ErrDuplicateUser                        // EALREADY
	ErrFirstArgOfSub                        // ECHILD
)

func (e RuleError) Error() string {
	switch e {
	case ErrUnknownCommand:
		return "Unknown command or category name in ACL"
	case ErrSyntax:
		return "Syntax error"
	case ErrKeyAfterAll:
		return "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
	case ErrChannelAfterAll:
		return "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
	case ErrNoSuchPassword:
		return "The password you are trying to remove from the user does not exist"
	case ErrBadHash:
		return "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	case ErrDuplicateUser:
		return "Duplicate user found. A user can only be defined once in config files"
	case ErrFirstArgOfSub:
		return "Allowing first-arg of a subcommand is not supported"
	}
	return "Wrong format"
}

// Key pattern permissions (ACL_READ_PERMISSION, ACL_WRITE_PERMISSION).
const (
	permRead  uint8 = 1
	permWrite uint8 = 2
	permAll         = permRead | permWrite
)

// Sanitize-payload flag values (they only show in descriptions: svcdb has
// no RESTORE to sanitize).
const (
	sanitizeNone uint8 = iota
	sanitizePayload
	sanitizeSkip
)

type keyPattern struct {
	flags   uint8
	pattern string
}

// selector is Redis' aclSelector. bits is indexed by command.Table ID.
type selector struct {
	root        bool
	allKeys     bool
	allChannels bool
	allCommands bool
	future      bool // Redis' reserved bit: set by +@all, cleared by -@all only
	bits        []uint64
	firstArgs   map[int][]string // command ID → allowed first arguments
	keys        []keyPattern
	channels    []string
}

// userState is one immutable snapshot of a user's rules (see the package
// doc); it is modified only before it is published.
type userState struct {
	enabled   bool // "on"; Redis keeps on and off as two flags, one always set
	nopass    bool
	sanitize  uint8
	passwords []string // SHA-256 hex, in the order added
	selectors []*selector
	allowAll  bool
}

func (a *ACL) newSelector(root bool) *selector {
	return &selector{root: root, bits: make([]uint64, a.cmds.words), allChannels: a.pubsubDefault.Load()}
}

// newState is a user as ACLCreateUser makes it: off, no passwords, a root
// selector allowing nothing.
func (a *ACL) newState() *userState {
	return &userState{selectors: []*selector{a.newSelector(true)}}
}

func (s *selector) clone() *selector {
	c := *s
	c.bits = append([]uint64(nil), s.bits...)
	c.keys = append([]keyPattern(nil), s.keys...)
	c.channels = append([]string(nil), s.channels...)
	if s.firstArgs != nil {
		c.firstArgs = make(map[int][]string, len(s.firstArgs))
		for id, v := range s.firstArgs {
			c.firstArgs[id] = append([]string(nil), v...)
		}
	}
	return &c
}

func (s *userState) clone() *userState {
	c := *s
	c.passwords = append([]string(nil), s.passwords...)
	c.selectors = make([]*selector, len(s.selectors))
	for i, sel := range s.selectors {
		c.selectors[i] = sel.clone()
	}
	return &c
}

// finish computes the derived allowAll before the snapshot is published.
func (s *userState) finish(ix *cmdIndex) {
	s.allowAll = false
	for _, sel := range s.selectors {
		if sel.allKeys && sel.allChannels && (sel.allCommands || ix.allBitsSet(sel.bits)) {
			s.allowAll = true
			return
		}
	}
}

// cmdIndex is what the rules need from the command table, computed once.
type cmdIndex struct {
	table   *command.Table
	n       int
	words   int
	catBits [len(Categories)][]uint64
	// chanKind says how a command names channels (Redis'
	// ACLDoesCommandHaveChannels), by command ID.
	chanKind []uint8
	hasKeys  []bool // doesCommandHaveKeys, by command ID
}

const (
	chanNone uint8 = iota
	chanFirst
	chanAll
	chanAllLiteral // PSUBSCRIBE: patterns are compared literally
)

func newCmdIndex(t *command.Table) *cmdIndex {
	ix := &cmdIndex{table: t, n: t.Len(), words: (t.Len() + 63) / 64}
	for i := range ix.catBits {
		ix.catBits[i] = make([]uint64, ix.words)
	}
	ix.chanKind = make([]uint8, ix.n)
	ix.hasKeys = make([]bool, ix.n)
	for id := range ix.n {
		c := t.ByID(id)
		for _, cat := range c.ACLCategories {
			if i := categoryIndex(strings.TrimPrefix(cat, "@")); i >= 0 {
				ix.catBits[i][id/64] |= 1 << (id % 64)
			}
		}
		switch c.FullName {
		case "publish", "spublish":
			ix.chanKind[id] = chanFirst
		case "subscribe", "ssubscribe":
			ix.chanKind[id] = chanAll
		case "psubscribe":
			ix.chanKind[id] = chanAllLiteral
		}
		for _, ks := range c.KeySpecs {
			if ks.Flags&command.KeyNotKey == 0 {
				ix.hasKeys[id] = true
			}
		}
		if c.Flags&command.FlagMovableKeys != 0 && len(c.KeySpecs) > 0 {
			ix.hasKeys[id] = true
		}
	}
	return ix
}

func (ix *cmdIndex) allBitsSet(b []uint64) bool {
	for id := range ix.n {
		if b[id/64]&(1<<(id%64)) == 0 {
			return false
		}
	}
	return true
}

func getBit(b []uint64, id int) bool { return b[id/64]&(1<<(id%64)) != 0 }

func (s *selector) setBit(id int, on bool) {
	if on {
		s.bits[id/64] |= 1 << (id % 64)
	} else {
		s.bits[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

// changePerm is ACLChangeSelectorPerm: a command and all its subcommands.
func (s *selector) changePerm(c *command.Command, on bool) {
	s.setBit(c.ID, on)
	delete(s.firstArgs, c.ID)
	for _, sub := range c.Subcommands {
		s.setBit(sub.ID, on)
	}
}

// setCategory is ACLSetSelectorCommandBitsForCategory.
func (a *ACL) setCategory(s *selector, cat int, on bool) {
	t := a.cmds.table
	for id := range a.cmds.n {
		if getBit(a.cmds.catBits[cat], id) {
			s.changePerm(t.ByID(id), on)
		}
	}
}

func countOnes(b []uint64) int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// lookupCommand is ACLLookupCommand: "name" or "container|sub".
func (a *ACL) lookupCommand(name string) *command.Command {
	t := a.cmds.table
	switch strings.Count(name, "|") {
	case 0:
		return t.Lookup([]byte(name))
	case 1:
		return t.LookupFullName([]byte(name))
	}
	return nil
}

// hasSpaces is ACLStringHasSpaces: C isspace or NUL.
func hasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// HashPassword is the SHA-256 hex form passwords are stored in.
func HashPassword(pass string) string {
	sum := sha256.Sum256([]byte(pass))
	return hex.EncodeToString(sum[:])
}

// apply is ACLSetUser: one rule applied to a snapshot under construction.
func (a *ACL) apply(s *userState, op string) error {
	if op == "" {
		return nil
	}
	switch {
	case strings.EqualFold(op, "on"):
		s.enabled = true
	case strings.EqualFold(op, "off"):
		s.enabled = false
	case strings.EqualFold(op, "skip-sanitize-payload"):
		s.sanitize = sanitizeSkip
	case strings.EqualFold(op, "sanitize-payload"):
		s.sanitize = sanitizePayload
	case strings.EqualFold(op, "nopass"):
		s.nopass = true
		s.passwords = nil
	case strings.EqualFold(op, "resetpass"):
		s.nopass = false
		s.passwords = nil
	case op[0] == '>' || op[0] == '#':
		var h string
		if op[0] == '>' {
			h = HashPassword(op[1:])
		} else {
			if !validHash(op[1:]) {
				return ErrBadHash
			}
			h = op[1:]
		}
		found := false
		for _, p := range s.passwords {
			if p == h {
				found = true
			}
		}
		if !found {
			s.passwords = append(s.passwords, h)
		}
		s.nopass = false
	case op[0] == '<' || op[0] == '!':
		var h string
		if op[0] == '<' {
			h = HashPassword(op[1:])
		} else {
			if !validHash(op[1:]) {
				return ErrBadHash
			}
			h = op[1:]
		}
		for i, p := range s.passwords {
			if p == h {
				s.passwords = append(s.passwords[:i:i], s.passwords[i+1:]...)
				return nil
			}
		}
		return ErrNoSuchPassword
	case op[0] == '(' && op[len(op)-1] == ')':
		sel := a.newSelector(false)
		args, ok := splitArgs(op[1 : len(op)-1])
		if !ok {
			return ErrSyntax // sdssplitargs fails: Redis asserts; refuse instead
		}
		for _, o := range args {
			if err := a.applySelector(sel, o); err != nil {
				return err
			}
		}
		s.selectors = append(s.selectors, sel)
	case strings.EqualFold(op, "clearselectors"):
		s.selectors = s.selectors[:1]
	case strings.EqualFold(op, "reset"):
		for _, o := range []string{"resetpass", "resetkeys", "resetchannels", "off", "sanitize-payload", "clearselectors", "-@all"} {
			_ = a.apply(s, o)
		}
		if a.pubsubDefault.Load() {
			_ = a.apply(s, "allchannels")
		}
	default:
		return a.applySelector(s.selectors[0], op)
	}
	return nil
}

// applySelector is ACLSetSelector.
func (a *ACL) applySelector(s *selector, op string) error {
	switch {
	case strings.EqualFold(op, "allkeys") || op == "~*":
		s.allKeys = true
		s.keys = nil
	case strings.EqualFold(op, "resetkeys"):
		s.allKeys = false
		s.keys = nil
	case strings.EqualFold(op, "allchannels") || op == "&*":
		s.allChannels = true
		s.channels = nil
	case strings.EqualFold(op, "resetchannels"):
		s.allChannels = false
		s.channels = nil
	case strings.EqualFold(op, "allcommands") || strings.EqualFold(op, "+@all"):
		for i := range s.bits {
			s.bits[i] = ^uint64(0)
		}
		s.allCommands, s.future = true, true
		s.firstArgs = nil
	case strings.EqualFold(op, "nocommands") || strings.EqualFold(op, "-@all"):
		clear(s.bits)
		s.allCommands, s.future = false, false
		s.firstArgs = nil
	case op[0] == '~' || op[0] == '%':
		if s.allKeys {
			return ErrKeyAfterAll
		}
		var flags uint8
		off := 1
		if op[0] == '%' {
		loop:
			for ; off < len(op); off++ {
				switch {
				case (op[off] == 'R' || op[off] == 'r') && flags&permRead == 0:
					flags |= permRead
				case (op[off] == 'W' || op[off] == 'w') && flags&permWrite == 0:
					flags |= permWrite
				case op[off] == '~':
					off++
					break loop
				default:
					return ErrSyntax
				}
			}
			if flags == 0 {
				// "%~pat": Redis 7.0.15 refuses a pattern without access.
				return ErrSyntax
			}
		} else {
			flags = permAll
		}
		pat := op[off:]
		if hasSpaces(pat) {
			return ErrSyntax
		}
		found := false
		for i := range s.keys {
			if s.keys[i].pattern == pat {
				s.keys[i].flags |= flags
				found = true
			}
		}
		if !found {
			s.keys = append(s.keys, keyPattern{flags: flags, pattern: pat})
		}
		s.allKeys = false
	case op[0] == '&':
		if s.allChannels {
			return ErrChannelAfterAll
		}
		pat := op[1:]
		if hasSpaces(pat) {
			return ErrSyntax
		}
		found := false
		for _, c := range s.channels {
			if c == pat {
				found = true
			}
		}
		if !found {
			s.channels = append(s.channels, pat)
		}
		s.allChannels = false
	case op[0] == '+' && (len(op) < 2 || op[1] != '@'):
		name := op[1:]
		bar := strings.LastIndexByte(name, '|')
		if bar < 0 {
			c := a.lookupCommand(name)
			if c == nil {
				return ErrUnknownCommand
			}
			s.changePerm(c, true)
			return nil
		}
		c := a.lookupCommand(name[:bar])
		if c == nil {
			return ErrUnknownCommand
		}
		if c.Parent != nil {
			return ErrFirstArgOfSub
		}
		sub := name[bar+1:]
		if sub == "" {
			return ErrSyntax
		}
		if len(c.Subcommands) > 0 {
			sc := a.lookupCommand(name)
			if sc == nil {
				return ErrUnknownCommand
			}
			s.changePerm(sc, true)
			return nil
		}
		// A first argument of a command without subcommands (+select|0).
		if s.firstArgs == nil {
			s.firstArgs = map[int][]string{}
		}
		for _, f := range s.firstArgs[c.ID] {
			if strings.EqualFold(f, sub) {
				return nil
			}
		}
		s.firstArgs[c.ID] = append(s.firstArgs[c.ID], sub)
	case op[0] == '-' && (len(op) < 2 || op[1] != '@'):
		c := a.lookupCommand(op[1:])
		if c == nil {
			return ErrUnknownCommand
		}
		s.changePerm(c, false)
	case (op[0] == '+' || op[0] == '-') && op[1] == '@':
		cat := categoryIndex(op[2:])
		if cat < 0 {
			return ErrUnknownCommand
		}
		a.setCategory(s, cat, op[0] == '+')
	default:
		return ErrSyntax
	}
	return nil
}

// MergeSelectorArgs is ACLMergeSelectorArguments: a selector given as
// several arguments ("(+get", "~x)") is joined with spaces into one. ok is
// false, with the index of the argument that opened it, when a parenthesis
// is not closed.
func MergeSelectorArgs(args []string) (merged []string, badIdx int, ok bool) {
	open := -1
	var cur string
	for j, op := range args {
		// As Redis, an opening argument restarts the selector even inside one.
		if len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			cur, open = op, j
			continue
		}
		if open >= 0 {
			cur += " " + op
			if len(op) > 0 && op[len(op)-1] == ')' {
				merged = append(merged, cur)
				open = -1
			}
			continue
		}
		merged = append(merged, op)
	}
	if open >= 0 {
		return nil, open, false
	}
	return merged, 0, true
}

// splitArgs is Redis' sdssplitargs (core/resp's inline splitter follows it).
func splitArgs(line string) ([]string, bool) {
	if i := strings.IndexByte(line, 0); i >= 0 {
		line = line[:i] // a C string ends at its NUL
	}
	argv, ok := resp.SplitArgs([]byte(line))
	if !ok {
		return nil, false
	}
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = string(a)
	}
	return out, true
}
