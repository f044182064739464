package slowlog

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Redis' limits (slowlog.h): an entry keeps at most MaxArgs arguments, the
// last one replaced by a "... (N more arguments)" note, and each argument at
// most DefaultMaxArgLen bytes unless SetMaxArgLen says otherwise.
const (
	MaxArgs          = 32  // SLOWLOG_ENTRY_MAX_ARGC
	DefaultMaxArgLen = 128 // SLOWLOG_ENTRY_MAX_STRING
	// MaxRing caps the number of slots: slowlog-max-len accepts any int64,
	// and the ring is allocated up front (8 bytes per slot).
	MaxRing = 1 << 20
	// Redacted replaces secret arguments, as Redis 7.0's
	// redactClientCommandArgument.
	Redacted = "(redacted)"
)

// Entry is one logged command. Entries are immutable once published: Get
// returns copies of the struct that share Args, which callers must not
// modify.
type Entry struct {
	ID         int64         // unique, increasing; never reused, even across Reset
	Time       time.Time     // when the command was logged (replies use Unix seconds)
	Duration   time.Duration // execution time (replies use microseconds)
	Args       []string      // the command and its arguments, truncated
	ClientAddr string        // "ip:port" of the client
	ClientName string        // CLIENT SETNAME's name, "" when none
}

// ring is one generation of slots; SetMaxLen replaces it as a whole.
type ring struct {
	slots []atomic.Pointer[Entry]
}

// Log is a lock-free slow-command log. The zero value is not usable: use
// New. All methods are safe for concurrent use by any number of goroutines.
type Log struct {
	nextID  atomic.Int64
	resetID atomic.Int64 // entries with ID < resetID were removed by Reset
	slower  atomic.Int64 // threshold in ns; < 0: disabled
	argLen  atomic.Int64
	ring    atomic.Pointer[ring]
	secret  atomic.Pointer[func(param string) bool]

	// resizeMu serialises SetMaxLen against itself. Add, Get, Len and
	// Reset never take it.
	resizeMu sync.Mutex
}

// New returns a log keeping maxLen entries (slowlog-max-len) of commands
// that ran at least slowerThan (slowlog-log-slower-than: negative disables
// the log, 0 logs every command), with arguments cut to maxArgLen bytes
// (<= 0: DefaultMaxArgLen).
func New(maxLen int, slowerThan time.Duration, maxArgLen int) *Log {
	l := &Log{}
	l.ring.Store(newRing(maxLen))
	l.SetSlowerThan(slowerThan)
	l.SetMaxArgLen(maxArgLen)
	return l
}

func newRing(n int) *ring {
	n = min(max(n, 0), MaxRing)
	return &ring{slots: make([]atomic.Pointer[Entry], n)}
}

// SetSlowerThan sets the threshold; negative disables the log.
func (l *Log) SetSlowerThan(d time.Duration) {
	if d < 0 {
		d = -1
	}
	l.slower.Store(int64(d))
}

// Threshold returns the threshold SlowerThan compares with; negative when
// the log is disabled.
func (l *Log) Threshold() time.Duration { return time.Duration(l.slower.Load()) }

// SetMaxArgLen sets the longest argument an entry keeps (<= 0:
// DefaultMaxArgLen). It applies to entries added afterwards.
func (l *Log) SetMaxArgLen(n int) {
	if n <= 0 {
		n = DefaultMaxArgLen
	}
	l.argLen.Store(int64(n))
}

// SetSecretParams tells Add which CONFIG SET parameters hold secrets, whose
// values are logged as "(redacted)". Without it, Redis' own sensitive
// parameters (requirepass, masterauth) are. f must be safe to call from
// any goroutine; it runs only for logged CONFIG SET commands.
func (l *Log) SetSecretParams(f func(param string) bool) { l.secret.Store(&f) }

// SlowerThan reports whether a command that ran for d must be logged. It is
// the data path's check: one atomic load and a compare, no allocation.
func (l *Log) SlowerThan(d time.Duration) bool {
	t := l.slower.Load()
	return t >= 0 && int64(d) >= t
}

// SetMaxLen changes how many entries the log keeps, keeping the newest
// ones. An Add running concurrently may store into the old ring and be lost
// (see the package doc); ids are not affected.
func (l *Log) SetMaxLen(n int) {
	l.resizeMu.Lock()
	defer l.resizeMu.Unlock()
	old := l.ring.Load()
	nr := newRing(n)
	if len(nr.slots) == len(old.slots) {
		return
	}
	if len(nr.slots) > 0 {
		for _, e := range l.collect(old) {
			nr.publish(e)
		}
	}
	l.ring.Store(nr)
}

// Add logs a command. args[0] is the command name; args may be reused by
// the caller once Add returns (what is kept is copied). now is the time of
// logging, d the execution time. Add does not check the threshold: call it
// when SlowerThan(d) is true.
func (l *Log) Add(args [][]byte, d time.Duration, now time.Time, clientAddr, clientName string) {
	id := l.nextID.Add(1) - 1
	r := l.ring.Load()
	if len(r.slots) == 0 {
		return // slowlog-max-len 0: Redis creates the entry and trims it at once
	}
	r.publish(&Entry{
		ID:         id,
		Time:       now,
		Duration:   d,
		Args:       truncate(args, int(l.argLen.Load()), l.redactMask(args)),
		ClientAddr: clientAddr,
		ClientName: clientName,
	})
}

// publish stores e in its slot unless the slot already holds a newer entry
// (possible when a slow Add is lapped by faster ones).
func (r *ring) publish(e *Entry) {
	slot := &r.slots[uint64(e.ID)%uint64(len(r.slots))]
	for {
		cur := slot.Load()
		if cur != nil && cur.ID >= e.ID {
			return
		}
		if slot.CompareAndSwap(cur, e) {
			return
		}
	}
}

// redactMask returns the argument indexes (bit i: args[i]) that Redis 7.0
// logs as "(redacted)": AUTH's arguments (authCommand), the user and
// password of HELLO's AUTH option (helloCommand) and the values of secret
// parameters in CONFIG SET (configSetCommand's SENSITIVE_CONFIG). Redis
// stops redacting at the first option or parameter it rejects; svcdb
// redacts every one, so an error never lets a later secret through.
func (l *Log) redactMask(args [][]byte) (mask uint64) {
	set := func(i int) {
		if i < 64 {
			mask |= 1 << i
		}
	}
	switch {
	case len(args) == 0:
	case equalFold(args[0], "auth"):
		for i := 1; i < len(args); i++ {
			set(i)
		}
	case equalFold(args[0], "hello"):
		for j := 2; j < len(args); j++ {
			more := len(args) - 1 - j
			switch {
			case equalFold(args[j], "auth") && more >= 2:
				set(j + 1)
				set(j + 2)
				j += 2
			case equalFold(args[j], "setname") && more >= 1:
				j++
			default:
				return mask // HELLO's syntax error: Redis parses no further
			}
		}
	case equalFold(args[0], "config") && len(args) > 1 && equalFold(args[1], "set"):
		secret := redisSensitive
		if f := l.secret.Load(); f != nil {
			secret = *f
		}
		for i := 2; i+1 < len(args); i += 2 {
			if secret(string(args[i])) {
				set(i + 1)
			}
		}
	}
	return mask
}

// redisSensitive is Redis 7.0's set of SENSITIVE_CONFIG parameters that
// svcdb could be asked to set.
func redisSensitive(param string) bool {
	return strings.EqualFold(param, "requirepass") || strings.EqualFold(param, "masterauth")
}

// equalFold compares ASCII case-insensitively, as strcasecmp.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// truncate copies args with Redis' limits (slowlogCreateEntry): at most
// MaxArgs arguments, the last kept one replaced by "... (N more
// arguments)", and each argument longer than maxArgLen bytes cut to
// maxArgLen followed by "... (N more bytes)". Arguments whose bit is set
// in redact become Redacted. All kept text lives in one string, so an
// entry costs three allocations whatever its size.
func truncate(args [][]byte, maxArgLen int, redact uint64) []string {
	n := min(len(args), MaxArgs)
	var note string
	if n != len(args) {
		note = "... (" + strconv.Itoa(len(args)-n+1) + " more arguments)"
	}
	size := len(note)
	for j := range n {
		if note != "" && j == n-1 {
			break
		}
		if redact&(1<<j) != 0 {
			size += len(Redacted)
		} else if a := args[j]; len(a) > maxArgLen {
			size += maxArgLen + len("... ( more bytes)") + 20
		} else {
			size += len(a)
		}
	}
	var b strings.Builder
	b.Grow(size)
	ends := make([]int, n)
	for j := range n {
		switch a := args[j]; {
		case note != "" && j == n-1:
			b.WriteString(note)
		case redact&(1<<j) != 0:
			b.WriteString(Redacted)
		case len(a) > maxArgLen:
			b.Write(a[:maxArgLen])
			b.WriteString("... (")
			var num [20]byte
			b.Write(strconv.AppendInt(num[:0], int64(len(a)-maxArgLen), 10))
			b.WriteString(" more bytes)")
		default:
			b.Write(a)
		}
		ends[j] = b.Len()
	}
	all := b.String() // no copy: the builder's buffer becomes the string
	out := make([]string, n)
	start := 0
	for j, end := range ends {
		out[j] = all[start:end]
		start = end
	}
	return out
}

// collect returns the live entries of r (not removed by Reset), newest
// first.
func (l *Log) collect(r *ring) []*Entry {
	floor := l.resetID.Load()
	out := make([]*Entry, 0, len(r.slots))
	for i := range r.slots {
		if e := r.slots[i].Load(); e != nil && e.ID >= floor {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *Entry) int {
		switch {
		case a.ID > b.ID:
			return -1
		case a.ID < b.ID:
			return 1
		}
		return 0
	})
	return out
}

// Get returns up to count entries, newest first; a negative count returns
// them all. The entries are copies; their Args are shared and must not be
// modified.
func (l *Log) Get(count int) []Entry {
	es := l.collect(l.ring.Load())
	if count >= 0 && count < len(es) {
		es = es[:count]
	}
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = *e
	}
	return out
}

// Len returns the number of entries in the log (SLOWLOG LEN).
func (l *Log) Len() int {
	floor := l.resetID.Load()
	r := l.ring.Load()
	n := 0
	for i := range r.slots {
		if e := r.slots[i].Load(); e != nil && e.ID >= floor {
			n++
		}
	}
	return n
}

// Reset removes every entry logged so far (SLOWLOG RESET). Ids keep
// counting. An Add that took its id before Reset and publishes after it is
// removed too: it belongs to the log that was reset.
func (l *Log) Reset() {
	floor := l.nextID.Load()
	for {
		cur := l.resetID.Load()
		if cur >= floor || l.resetID.CompareAndSwap(cur, floor) {
			break
		}
	}
	// Free the memory; never clear a slot an Add has refilled since.
	r := l.ring.Load()
	for i := range r.slots {
		if e := r.slots[i].Load(); e != nil && e.ID < floor {
			r.slots[i].CompareAndSwap(e, nil)
		}
	}
}

// MaxLen returns the number of entries the log can keep.
func (l *Log) MaxLen() int { return len(l.ring.Load().slots) }
