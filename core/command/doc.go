// Package command owns the static table of commands svcdb knows: their
// metadata only, never their execution. It is what the dispatcher consults
// to resolve a name, check arity and find the keys of a request, and what
// the COMMAND command reports to clients.
//
// # Contents
//
//	Table ──┬─ top:  name      → *Command     (Lookup, case-insensitive, 0 allocs)
//	        ├─ full: full name → *Command     (LookupFullName, "client|setname")
//	        ├─ all:  top-level commands, sorted by name (All)
//	        └─ byID: every command and subcommand by dense ID (ByID, Len)
//
//	Command ── Name/FullName, Arity, Flags, FirstKey/LastKey/Step,
//	           ACLCategories, Tips, docs (Group, Since, Summary, Complexity,
//	           History, ...), KeySpecs, Args, Subcommands ⇄ Parent
//
// The metadata is Redis 7.0.15's, command for command (src/commands/*.json
// as the server reports it through COMMAND INFO and COMMAND DOCS), so that
// clients such as redis-cli, go-redis and cluster-aware libraries see the
// same flags, key positions, ACL categories and argument docs as from a real
// redis-server. ACLCategories hold the final list Redis reports, implicit
// categories (@read/@write/@fast/@slow/@admin/@dangerous...) included.
// CLIENT SETINFO is the one 7.2 addition: current clients send it on
// connect. golden_test.go compares every entry with a live redis-server.
//
// The entries live in one file per command family (connection.go,
// strings.go, generic.go, hash.go, list.go, set.go, sortedset.go, stream.go,
// transactions.go, pubsub.go, server.go, cluster.go, ...); table.go
// assembles them in New, an explicit constructor, instead of init() filling
// a global, so tests and servers can build independent tables. hash.go to
// pubsub.go are generated from a live redis-server 7.0 by
// internal/gentable (their //go:generate lines rebuild them: go generate
// ./core/command/); gentable writes the other families' format too, so a
// new family costs one command line.
//
// # Lookup
//
// Lookup, LookupSub and LookupFullName lower-case the name into a fixed
// stack array and index a map with string(array[:n]), which the Go compiler
// performs without allocating. Names longer than 64 bytes are rejected
// without a lookup. Only ASCII letters are folded, as in Redis.
//
// # Replies
//
// AppendInfo and AppendDocs encode one element of COMMAND / COMMAND INFO /
// COMMAND DOCS, and Reply implements the whole COMMAND command, so that its
// behaviour lives in one place. They append RESP2 or RESP3 to a caller's
// buffer with core/resp's encoders. Where Redis iterates its
// unordered dict, we list commands in name order.
//
// # Concurrency
//
// A Table and its Commands are immutable after New returns and safe for
// concurrent use without locking. Methods that take byte slices read them
// only during the call and never retain them.
package command
