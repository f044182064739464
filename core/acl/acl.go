package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/svcdb/svcdb/core/command"
)

// DefaultUserName is the user every connection starts as.
const DefaultUserName = "default"

// DefaultLogMaxLen is Redis' acllog-max-len default.
const DefaultLogMaxLen = 128

// ACL is the set of users, the default user and the ACL LOG of one server.
// Its methods are safe for concurrent use; User.AllowsAll and User.Check
// take no lock.
type ACL struct {
	cmds *cmdIndex

	mu          sync.Mutex
	users       map[string]*User
	defaultUser *User
	log         aclLog
	// pubsubDefault is acl-pubsub-default: true for allchannels.
	pubsubDefault atomic.Bool
	// authRequired mirrors "the default user has a password or is off"
	// (Redis' authRequired without the per-client part), for the loops.
	authRequired atomic.Bool
}

// New returns the ACL state of a server that starts as Redis does: only
// the default user, "on nopass ~* &* +@all".
func New(table *command.Table) *ACL {
	a := &ACL{cmds: newCmdIndex(table), users: map[string]*User{}}
	a.log.maxLen = DefaultLogMaxLen
	a.defaultUser = a.newDefaultUser()
	a.users[DefaultUserName] = a.defaultUser
	a.syncDefault()
	return a
}

func (a *ACL) newDefaultUser() *User {
	u := &User{ix: a.cmds, name: DefaultUserName}
	s := a.newState()
	for _, op := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		if err := a.apply(s, op); err != nil {
			panic("acl: default user: " + err.Error())
		}
	}
	s.finish(a.cmds)
	u.state.Store(s)
	return u
}

// syncDefault refreshes authRequired after the default user changed.
// Callers hold mu (or own a not yet shared ACL).
func (a *ACL) syncDefault() {
	s := a.defaultUser.state.Load()
	a.authRequired.Store(!s.nopass || !s.enabled)
}

// SetPubSubDefault is acl-pubsub-default: whether new selectors (new
// users, "reset", "(...)") start with allchannels instead of resetchannels.
func (a *ACL) SetPubSubDefault(allChannels bool) { a.pubsubDefault.Store(allChannels) }

// Table is the command table the ACL was built for.
func (a *ACL) Table() *command.Table { return a.cmds.table }

// DefaultUser is the user connections start as.
func (a *ACL) DefaultUser() *User { return a.defaultUser }

// AuthRequired reports whether a connection that has not authenticated must
// AUTH before running commands: the default user has passwords (is not
// nopass) or is off (Redis' authRequired). One atomic load.
func (a *ACL) AuthRequired() bool { return a.authRequired.Load() }

// DefaultUserHasPassword reports whether the default user is protected by
// a password (it is not nopass), for protected mode and DEBUG gating.
func (a *ACL) DefaultUserHasPassword() bool {
	return !a.defaultUser.state.Load().nopass
}

// User returns the user called name, or nil.
func (a *ACL) User(name string) *User {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.users[name]
}

// UserNames returns every user name in order (ACL USERS; Redis' rax order is
// byte order).
func (a *ACL) UserNames() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	names := make([]string, 0, len(a.users))
	for n := range a.users {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SetRequirePass makes pass the default user's only password, or the
// default user nopass when pass is empty: requirepass, as Redis'
// ACLUpdateDefaultUserPassword.
func (a *ACL) SetRequirePass(pass string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.defaultUser.state.Load().clone()
	_ = a.apply(s, "resetpass")
	if pass != "" {
		_ = a.apply(s, ">"+pass)
	} else {
		_ = a.apply(s, "nopass")
	}
	s.finish(a.cmds)
	a.defaultUser.state.Store(s)
	a.syncDefault()
}

// Authenticate checks name/pass as Redis' ACLCheckUserCredentials: the user
// must exist and be on, and be nopass or have a password whose SHA-256
// matches. Digests are compared in constant time, so the time taken does
// not depend on how much of a password is right or on its length.
func (a *ACL) Authenticate(name, pass []byte) *User {
	a.mu.Lock()
	u := a.users[string(name)]
	a.mu.Unlock()
	if u == nil {
		return nil
	}
	s := u.state.Load()
	if !s.enabled {
		return nil
	}
	if s.nopass {
		return u
	}
	sum := sha256.Sum256(pass)
	var hexsum [64]byte
	hex.Encode(hexsum[:], sum[:])
	ok := 0
	for _, p := range s.passwords {
		ok |= subtle.ConstantTimeCompare(hexsum[:], []byte(p))
	}
	if ok == 1 {
		return u
	}
	return nil
}

// User is one ACL user. Its name never changes; its rules are an immutable
// snapshot replaced as a whole.
type User struct {
	ix      *cmdIndex
	name    string
	state   atomic.Pointer[userState]
	deleted atomic.Bool
}

// Name is the user's name.
func (u *User) Name() string { return u.name }

// Deleted reports whether ACL DELUSER or ACL LOAD removed the user; its
// clients are being disconnected.
func (u *User) Deleted() bool { return u.deleted.Load() }

// AllowsAll reports whether the user may run every command on every key and
// channel: the hot path's one check (see the package doc).
func (u *User) AllowsAll() bool { return u.state.Load().allowAll }

// Enabled reports whether the user is on.
func (u *User) Enabled() bool { return u.state.Load().enabled }
