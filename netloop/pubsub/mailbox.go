package pubsub

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/config"
)

// Mailbox is a client's queue of encoded messages: a byte buffer under its
// own mutex, held only for one append. Publishers, invalidations and
// MONITOR append to it from any goroutine (Open, Close), and wake the
// client's loop when it goes from empty to non-empty; the loop moves it
// into its output at the start of its next turn (DrainTo) and writes it.
// The connection owns it and wakes its loop; this type never does.
type Mailbox struct {
	spare []byte // the other buffer; the client's loop only

	mu        sync.Mutex
	box       []byte       // guarded by mu
	size      atomic.Int64 // len(box)
	softSince atomic.Int64 // unix seconds the soft limit was first seen reached; 0 = below
}

// Size is how many bytes wait. Any goroutine.
func (m *Mailbox) Size() int64 { return m.size.Load() }

// Open locks the mailbox for an append and returns its bytes; Close stores
// the appended bytes, unlocks it and returns its size.
func (m *Mailbox) Open() []byte { m.mu.Lock(); return m.box }

// Close ends what Open began.
func (m *Mailbox) Close(box []byte) int64 {
	m.box = box
	size := int64(len(box))
	m.size.Store(size)
	m.mu.Unlock()
	return size
}

// DrainTo moves the waiting messages to the end of out and returns it; on
// the client's loop.
func (m *Mailbox) DrainTo(out []byte) []byte {
	if m.size.Load() == 0 {
		return out
	}
	m.mu.Lock()
	b := m.box
	m.box = m.spare
	m.size.Store(0)
	m.mu.Unlock()
	if len(out) == 0 {
		out, b = b, out // hand the buffer over instead of copying it
	} else {
		out = append(out, b...)
	}
	if cap(b) > 64<<10 {
		b = nil // a burst's buffer is not kept
	}
	m.spare = b[:0]
	return out
}

// InTransit is how much of a mailbox the output limit does not count:
// messages publishers appended that the subscriber's loop has not had its
// turn to write yet. Redis writes every iteration's output before it reads
// more input (16 KiB per client and read), so a subscriber that keeps up
// never holds more than that there; here one turn of a pipelining publisher
// appends 64 KiB and more, and publishers on other loops keep appending while
// the subscriber's loop writes. Counting those bytes would close subscribers
// that read as fast as they can whenever the limit is small.
const InTransit = 256 << 10

// Used is what an output limit weighs: the bytes waiting in the socket's
// outbound buffer (obl, as of the client's last write) and the part of its
// mailbox beyond InTransit.
func Used(obl, mailbox int64) int64 { return obl + max(mailbox-InTransit, 0) }

// Limits is one class of client-output-buffer-limit (bytes, 0: none), read
// by any goroutine.
type Limits struct {
	hard, soft, softSecs atomic.Int64
}

// Set follows a new value of the class.
func (l *Limits) Set(n config.OutputBufferLimit) {
	l.hard.Store(n.Hard)
	l.soft.Store(n.Soft)
	l.softSecs.Store(n.SoftSeconds)
}

// Over reports whether used bytes of m's client pass the hard limit, or
// have stayed past the soft one for longer than its seconds (m records
// when they first did), as Redis' checkClientOutputBufferLimits. The
// caller closes the client.
func (l *Limits) Over(m *Mailbox, used int64) bool {
	if hard := l.hard.Load(); hard > 0 && used >= hard {
		return true
	}
	if soft := l.soft.Load(); soft > 0 && used >= soft {
		now := time.Now().Unix()
		since := m.softSince.Load()
		if since == 0 {
			m.softSince.CompareAndSwap(0, now)
			return false
		}
		return now-since > l.softSecs.Load()
	}
	if m.softSince.Load() != 0 {
		m.softSince.Store(0)
	}
	return false
}
