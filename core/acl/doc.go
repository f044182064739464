// Package acl owns Redis 7.0's access control lists as pure logic: users
// (on/off, passwords stored as SHA-256 hex, nopass), the rule grammar of
// ACL SETUSER (acl.c's ACLSetUser and ACLSetSelector, selectors included),
// the permission check of a command against a user (command bit, key
// patterns with read/write access from the key specs' flags, channel
// patterns), the text forms ACL LIST, ACL GETUSER and the ACL file use, the
// bounded ACL LOG, and loading and saving the ACL file.
//
// It never touches sockets, clients or the keyspace: netloop asks it
// questions (may this user run this command? do these credentials
// authenticate?) and encodes its replies. It imports only core packages.
//
// # Model
//
//	ACL ──┬─ users: name → *User          (guarded by mu; cold paths only)
//	      ├─ defaultUser *User             (never deleted; requirepass is its password)
//	      └─ log: the ACL LOG ring          (guarded by mu)
//
//	User ── name, deleted flag, state (atomic pointer to an immutable snapshot)
//	snapshot ── flags, password hashes, selectors (root first), allowAll
//	selector ── command bitmap by command.Table ID, first-args, key
//	            patterns with R/W flags, channel patterns
//
// A snapshot is never modified once published: ACL SETUSER builds a new
// one from a copy and swaps the pointer, so event loops read a user's
// permissions with one atomic load and no lock, and a client that holds a
// *User sees every later change at its next command, as in Redis, where
// clients point at the user object that ACL SETUSER modifies in place.
//
// # Hot path
//
// User.AllowsAll is one atomic load and one bool: true when some selector
// allows every command, key and channel (the default user as it starts).
// netloop calls the full Check only when it is false, so the default user
// pays nothing measurable and nothing is allocated. Check itself allocates
// only for commands with more than 16 keys.
//
// # Where svcdb differs from Redis 7.0
//
//   - Rules naming a command svcdb does not implement (+eval ...)
//     are refused as unknown, as Redis refuses a command it does not know;
//     categories cover the commands svcdb has, so the compact text form of
//     a user's command rules (ACL LIST, GETUSER) may choose other categories
//     than Redis for the same rules when the counts differ.
//   - Single-command rules are described in command-table order (name
//     order); Redis follows its dict's hash order.
package acl
