package acl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// LoadError is a refused ACL file or configured user list: Msg is Redis'
// one-line text, naming the file and line of each problem.
type LoadError struct{ Msg string }

func (e *LoadError) Error() string { return e.Msg }

// LoadFile is ACL LOAD (and the aclfile at start-up), as Redis'
// ACLLoadFromFile: every line is "user <name> <rules...>" (blank lines
// allowed, no comments); all lines are checked, and if any is wrong nothing
// changes and the error lists every problem as "<file>:<line>: <why>. ".
// On success the users are replaced; the default user keeps its identity
// (its clients stay) and takes the file's rules, or the initial ones when
// the file does not mention it. Every other user object is retired (marked
// deleted, even when the file defines a user of the same name: Redis frees
// them and disconnects their clients); they are returned.
func (a *ACL) LoadFile(path string) ([]*User, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &LoadError{Msg: fmt.Sprintf("Error loading ACLs, opening file '%s': %s", path, strerror(err))}
	}
	users, errs := a.parseFile(path, string(data))
	if errs != "" {
		return nil, &LoadError{Msg: errs + "WARNING: ACL errors detected, no change to the previously active ACL rules was performed"}
	}
	return a.replaceUsers(users), nil
}

// parseFile builds the users of an ACL file without touching a; errs is
// empty when every line is right.
func (a *ACL) parseFile(path, data string) (map[string]*userState, string) {
	var errs strings.Builder
	users := map[string]*userState{}
	for i, line := range strings.Split(data, "\n") {
		num := i + 1
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		argv := strings.Split(line, " ") // sdssplitlen on single spaces, as Redis
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", path, num)
			continue
		}
		name := argv[1]
		if hasSpaces(name) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", path, num, name)
			continue
		}
		if _, dup := users[name]; dup {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", name, num)
			continue
		}
		s := a.newState()
		users[name] = s
		merged, _, ok := MergeSelectorArgs(argv[2:])
		if !ok {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", path, num)
		}
		for _, r := range merged {
			r = strings.Trim(r, "\t\r\n")
			if err := a.apply(s, r); err != nil {
				fmt.Fprintf(&errs, "%s:%d: %s. ", path, num, err)
			}
		}
		s.finish(a.cmds)
	}
	return users, errs.String()
}

// replaceUsers installs a complete new set of users (ACL LOAD).
func (a *ACL) replaceUsers(users map[string]*userState) []*User {
	a.mu.Lock()
	defer a.mu.Unlock()
	var retired []*User
	for name, u := range a.users {
		if name != DefaultUserName {
			u.deleted.Store(true)
			retired = append(retired, u)
		}
	}
	a.users = map[string]*User{DefaultUserName: a.defaultUser}
	a.installLocked(users)
	if _, ok := users[DefaultUserName]; !ok {
		a.defaultUser.state.Store(a.newDefaultUser().state.Load())
	}
	a.syncDefault()
	return retired
}

// ErrSave is ACL SAVE's failure text (the cause is in the returned error's
// chain and belongs in the log).
const ErrSave = "There was an error trying to save the ACLs. Please check the server logs for more information"

// SaveFile is ACL SAVE: every user's ACL LIST line, in name order, written
// to a temporary file that replaces path. The file holds password hashes,
// so it is created with mode 0600 (Redis uses 0644) and an existing file's
// mode is kept.
func (a *ACL) SaveFile(path string) error {
	a.mu.Lock()
	lines := a.listLocked()
	a.mu.Unlock()
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp := fmt.Sprintf("%s.tmp-%d-%d", path, os.Getpid(), time.Now().UnixMilli())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("acl: opening temp ACL file for ACL SAVE: %w", err)
	}
	_, err = f.WriteString(b.String())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("acl: writing ACL file for ACL SAVE: %w", err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}

// ConfiguredUser is a user given in the configuration file (Redis' "user"
// lines in redis.conf; svcdb's [[acl.user]] tables).
type ConfiguredUser struct {
	Name  string
	Rules string // space-separated rules, as after "user <name>" in an ACL file
}

// UserRuleError names the configured user and rule that was refused.
type UserRuleError struct {
	Index int // position in the list given to LoadConfigured
	User  string
	Rule  string
	Err   error
}

func (e *UserRuleError) Error() string {
	if e.Rule == "" {
		return fmt.Sprintf("user '%s': %s", e.User, e.Err)
	}
	return fmt.Sprintf("Error loading ACL rule '%s' for the user named '%s': %s", e.Rule, e.User, e.Err)
}

func (e *UserRuleError) Unwrap() error { return e.Err }

// LoadConfigured creates the users given in the configuration, as Redis'
// ACLAppendUserForLoading and ACLLoadConfiguredUsers: a user may be defined
// once; "default" is reset first and then takes its rules. Nothing changes
// when any rule is refused.
func (a *ACL) LoadConfigured(users []ConfiguredUser) error {
	seen := map[string]bool{}
	built := map[string]*userState{}
	for i, cu := range users {
		if cu.Name == "" || hasSpaces(cu.Name) {
			return &UserRuleError{Index: i, User: cu.Name, Err: ErrUsernameSpaces}
		}
		if seen[cu.Name] {
			return &UserRuleError{Index: i, User: cu.Name, Err: ErrDuplicateUser}
		}
		seen[cu.Name] = true
		merged, _, ok := MergeSelectorArgs(strings.Fields(cu.Rules))
		if !ok {
			return &UserRuleError{Index: i, User: cu.Name, Err: ErrUnmatchedParen}
		}
		s := a.newState()
		if cu.Name == DefaultUserName {
			_ = a.apply(s, "reset") // as ACLLoadConfiguredUsers
		}
		for _, r := range merged {
			if err := a.apply(s, r); err != nil {
				return &UserRuleError{Index: i, User: cu.Name, Rule: r, Err: err}
			}
		}
		s.finish(a.cmds)
		built[cu.Name] = s
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.installLocked(built)
	a.syncDefault()
	return nil
}

// installLocked publishes users' states: the default user takes its new
// state in place (clients keep pointing at it), every other name gets a new
// User. REQUIRES: a.mu held.
func (a *ACL) installLocked(users map[string]*userState) {
	for name, s := range users {
		if name == DefaultUserName {
			a.defaultUser.state.Store(s)
			continue
		}
		u := &User{ix: a.cmds, name: name}
		u.state.Store(s)
		a.users[name] = u
	}
}

// strerror spells an I/O error as C's strerror does ("No such file or
// directory").
func strerror(err error) string {
	var errno syscall.Errno
	msg := err.Error()
	if errors.As(err, &errno) {
		msg = errno.Error()
	}
	if msg == "" {
		return msg
	}
	r := []rune(msg)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}
