// Package slowlog is svcdb's slow-command log: Redis' SLOWLOG (src/slowlog.c
// in Redis 7.0) made safe for many writers.
//
// The data path checks every command with SlowerThan (one atomic load and a
// compare) and, only when it returns true, hands the command to Add. SLOWLOG
// GET/LEN/RESET and the /debug/api/slowlog endpoint read with Get, Len and
// Reset. Several event loops (and shards) add at once, so the log is
// lock-free for both sides: no writer ever waits for a reader or for
// another writer, and no reader takes a lock a writer could hold.
//
// # Layout
//
//	Log ── nextID  atomic.Int64   ids, as Redis' slowlog_entry_id: 0, 1, 2 ...
//	    ├─ resetID atomic.Int64   RESET's watermark: entries below it are gone
//	    ├─ slower  atomic.Int64   slowlog-log-slower-than in ns, -1 = disabled
//	    ├─ argLen  atomic.Int64   slowlog-max-arg-len
//	    └─ ring    atomic.Pointer[ring]
//	                 └─ slots []atomic.Pointer[Entry]  entry id lives at id % len(slots)
//
// Add takes the next id, builds an immutable Entry and publishes it into
// its slot with a compare-and-swap that never replaces a newer entry by an
// older one. A slot therefore always holds the newest entry that maps to it,
// and the ring holds (at most) the newest slowlog-max-len entries, like
// Redis' list trimmed after every push.
//
// # Where it differs from Redis
//
//   - Entries are published when Add finishes, not when their id is taken:
//     a reader may briefly see entry n+1 without entry n, which is still being
//     copied by another loop.
//   - Changing slowlog-max-len builds a new ring and copies the newest
//     entries into it; an Add racing with the change may store into the old
//     ring and be lost. Redis (single-threaded) never loses one.
//   - The ring is an array of pointers sized by slowlog-max-len, capped at
//     MaxRing slots; Redis' list has no such cap (but also keeps the entries
//     themselves, which is what costs memory).
//   - Arguments are cut to slowlog-max-arg-len bytes (Redis: a fixed 128,
//     SLOWLOG_ENTRY_MAX_STRING) and to 32 arguments, with Redis' texts.
//   - Secrets are logged as "(redacted)", as in Redis 7.0 (the arguments of
//     AUTH, the user and password of HELLO's AUTH option, the value of a
//     secret parameter in CONFIG SET), but Add finds them from the
//     arguments instead of the command handlers marking them, and redacts
//     every secret of a CONFIG SET, even past an argument Redis rejects.
//
// Everything else follows Redis: ids are never reused (RESET does not
// rewind them), entries are returned newest first, a negative threshold
// disables logging and 0 logs every command.
package slowlog
