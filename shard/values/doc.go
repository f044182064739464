// Package values owns the encodings svcdb keeps collection values in, and the
// Kind enum that names a value's type for the keyspace and the RDB codec
// alike:
//
//   - Quicklist: a list too long for one listpack, a deque of listpack-like
//     nodes, the interior ones LZF-compressed under list-compress-depth
//     (list.go).
//   - Skiplist: a sorted set's skiplist with spans and its member index
//     (zset.go, zsetindex.go), plus the listpack layout of small sorted sets
//     (the Zl* functions: member and score entries, an integral score as a
//     0-7-byte integer, others as the float64's 8 bytes) and the score and
//     range parsing they share.
//   - HTable: the hash table of hashes and of sets too large for a listpack
//     (hash.go).
//   - the Intset* functions: the sorted-integers buffer of small integer
//     sets (intset.go).
//   - Stream: a stream's entries, consumer groups and pending lists
//     (stream.go), and the StreamID format.
//   - Verify and Recount methods (verify.go): each structure's invariants
//     checked from scratch, for the tests of this package and of the keyspace.
//
// Each full structure implements Collection: it keeps its own byte count
// current as it changes, so the keyspace's memory accounting never walks a
// value. The flat encoding of small hashes, lists, sets and sorted sets is the
// sibling leaf package listpack: it stays beside this package rather than
// under it because the keyspace walks small values in it directly, and it
// depends on nothing, so either place keeps the graph one-way. strtoul.go
// has the C-compatible number readers the encodings and SCAN share.
//
// # What it must never do
//
// Import the keyspace (shard/keyspace), the commands (shard/commands...) or
// the runtime (shard), or any package of ours other than listpack, lzf and core,
// which imports nothing of ours (imports_test.go checks it, and the arrows
// between the other shard packages too): an encoding knows nothing of keys,
// databases, commands, clients, tokens or shards, and is tested on its own.
// It holds no global mutable state (the one pool, of LZF compressors, lends
// scratch no later call depends on), takes no locks and starts no
// goroutines: whoever owns the value (the token holder of its shard) is the
// only one calling it. The hot operations (push, pop, index, add, find,
// score lookups) allocate nothing beyond the growth of the value itself.
package values
