package acl

import (
	"errors"
	"fmt"
	"sort"

	"github.com/svcdb/svcdb/core/resp"
)

// SetUserError is a refused ACL SETUSER rule: Redis' reply text is
// "ERR Error in ACL SETUSER modifier '<Rule>': <Err>".
type SetUserError struct {
	Rule string
	Err  error
}

func (e *SetUserError) Error() string {
	return fmt.Sprintf("Error in ACL SETUSER modifier '%s': %s", e.Rule, e.Err)
}

func (e *SetUserError) Unwrap() error { return e.Err }

// ErrUnmatchedParen is returned (wrapped) for a selector that does not close.
var ErrUnmatchedParen = errors.New("unmatched parenthesis")

// ErrUsernameSpaces refuses a user name with spaces or NUL bytes.
var ErrUsernameSpaces = errors.New("Usernames can't contain spaces or null characters")

// SetUser is ACL SETUSER: rules are applied in order to a copy of the user
// (a new user starts off, without passwords or permissions); if one is
// refused nothing changes. It returns the user and whether the channels it
// may use shrank (its Pub/Sub clients may have to go, as in Redis'
// ACLKillPubsubClientsIfNeeded).
func (a *ACL) SetUser(name string, rules []string) (*User, bool, error) {
	if hasSpaces(name) {
		return nil, false, ErrUsernameSpaces
	}
	merged, bad, ok := MergeSelectorArgs(rules)
	if !ok {
		return nil, false, fmt.Errorf("%w in acl selector starting at '%s'", ErrUnmatchedParen, rules[bad])
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	u := a.users[name]
	var s *userState
	if u != nil {
		s = u.state.Load().clone()
	} else {
		s = a.newState()
	}
	for _, r := range merged {
		if err := a.apply(s, r); err != nil {
			return nil, false, &SetUserError{Rule: r, Err: err}
		}
	}
	s.finish(a.cmds)
	shrank := false
	if u != nil {
		shrank = channelsShrank(u.state.Load(), s)
	} else {
		u = &User{ix: a.cmds, name: name}
		a.users[name] = u
	}
	u.state.Store(s)
	if u == a.defaultUser {
		a.syncDefault()
	}
	return u, shrank, nil
}

// channelsShrank is the test of ACLKillPubsubClientsIfNeeded: false when
// some new selector allows all channels or every old channel pattern is
// still listed.
func channelsShrank(old, upd *userState) bool {
	upcoming := map[string]bool{}
	for _, sel := range upd.selectors {
		if sel.allChannels {
			return false
		}
		for _, c := range sel.channels {
			upcoming[c] = true
		}
	}
	for _, sel := range old.selectors {
		if sel.allChannels {
			return true
		}
		for _, c := range sel.channels {
			if !upcoming[c] {
				return true
			}
		}
	}
	return false
}

// ErrDeleteDefault refuses ACL DELUSER default.
var ErrDeleteDefault = errors.New("The 'default' user cannot be removed")

// DelUsers is ACL DELUSER: it removes the named users that exist and marks
// them deleted (their clients must be disconnected) and returns them.
func (a *ACL) DelUsers(names []string) ([]*User, error) {
	for _, n := range names {
		if n == DefaultUserName {
			return nil, ErrDeleteDefault
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var gone []*User
	for _, n := range names {
		if u := a.users[n]; u != nil {
			delete(a.users, n)
			u.deleted.Store(true)
			gone = append(gone, u)
		}
	}
	return gone, nil
}

func sortedNames(m map[string]*User) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// AppendGetUser encodes ACL GETUSER's reply for u, as Redis 7.0: flags,
// passwords, the root selector's commands, keys and channels, then the
// other selectors.
func (a *ACL) AppendGetUser(dst []byte, u *User, resp3 bool) []byte {
	s := u.state.Load()
	dst = resp.AppendMapHeader(dst, 6, resp3)
	dst = resp.AppendBulkString(dst, "flags")
	flags := s.flagNames()
	dst = resp.AppendSetHeader(dst, len(flags), resp3)
	for _, f := range flags {
		dst = resp.AppendBulkString(dst, f)
	}
	dst = resp.AppendBulkString(dst, "passwords")
	dst = resp.AppendArrayHeader(dst, len(s.passwords))
	for _, p := range s.passwords {
		dst = resp.AppendBulkString(dst, p)
	}
	dst = a.appendSelector(dst, s.selectors[0])
	dst = resp.AppendBulkString(dst, "selectors")
	dst = resp.AppendArrayHeader(dst, len(s.selectors)-1)
	for _, sel := range s.selectors[1:] {
		dst = resp.AppendMapHeader(dst, 3, resp3)
		dst = a.appendSelector(dst, sel)
	}
	return dst
}

func (a *ACL) appendSelector(dst []byte, sel *selector) []byte {
	dst = resp.AppendBulkString(dst, "commands")
	dst = resp.AppendBulkString(dst, a.describeCommandRules(sel))
	dst = resp.AppendBulkString(dst, "keys")
	if sel.allKeys {
		dst = resp.AppendBulkString(dst, "~*")
	} else {
		var b []byte
		for i, p := range sel.keys {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, patternString(p)...)
		}
		dst = resp.AppendBulk(dst, b)
	}
	dst = resp.AppendBulkString(dst, "channels")
	if sel.allChannels {
		dst = resp.AppendBulkString(dst, "&*")
	} else {
		var b []byte
		for i, c := range sel.channels {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, '&')
			b = append(b, c...)
		}
		dst = resp.AppendBulk(dst, b)
	}
	return dst
}

// CategoryCommands is ACL CAT <category>: the full names of the commands
// and subcommands in it, in table order; ok is false for an unknown
// category.
func (a *ACL) CategoryCommands(cat string) (names []string, ok bool) {
	i := categoryIndex(cat)
	if i < 0 {
		return nil, false
	}
	for id := range a.cmds.n {
		if getBit(a.cmds.catBits[i], id) {
			names = append(names, a.cmds.table.ByID(id).FullName)
		}
	}
	return names, true
}
