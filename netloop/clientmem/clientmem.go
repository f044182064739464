package clientmem

import (
	"math/bits"
	"sync"
	"sync/atomic"
)

// Bucket bounds, as Redis' CLIENT_MEM_USAGE_BUCKET_MIN_LOG (32 KiB: every
// smaller client shares bucket 0) and MAX_LOG (8 GiB and over: the last).
const (
	minLog     = 15
	maxLog     = 33
	numBuckets = maxLog - minLog + 1
)

// MinLimit is the smallest limit enforced: a smaller maxmemory-clients
// counts as this much, as Redis' getClientEvictionLimit, so a bad setting
// cannot cut every client off.
const MinLimit = 128 << 10

// Limit is the eviction limit in bytes for maxmemory-clients given as bytes
// or as a percentage of maxmemory (one of them 0), as Redis'
// getClientEvictionLimit: 0 (off) when both are 0 or a percentage is set
// without maxmemory, never less than MinLimit otherwise.
func Limit(bytes, percent, maxmemory int64) int64 {
	n := bytes
	if percent > 0 {
		if maxmemory <= 0 {
			return 0
		}
		n = int64(float64(maxmemory) * float64(percent) / 100)
	}
	if n <= 0 {
		return 0
	}
	return max(n, MinLimit)
}

// Entry is one client's part of the Tracker. Update is called only by the
// client's own loop; the rest is the Tracker's.
type Entry struct {
	used     atomic.Int64 // the usage last given to Update, counted in Tracker.total
	evicting atomic.Bool  // asked to close by the evictor: no longer updated
	pending  atomic.Int64 // the usage it was evicted at, in Tracker.pending until Forget
	owner    any
	// bucket is where Update last put it (-1: none); written under
	// Tracker.mu by the client's loop only. The evictor takes an entry
	// out of its bucket's map without changing it: a stale bucket only
	// costs a deletion that finds nothing.
	bucket int8
}

// Used is the usage last recorded for the client.
func (e *Entry) Used() int64 { return e.used.Load() }

// Tracker keeps the clients' total memory and evicts past the limit.
type Tracker struct {
	limit   atomic.Int64 // bytes; 0 = eviction off
	total   atomic.Int64 // the sum of every tracked client's Entry.used
	pending atomic.Int64 // of total, what clients asked to close still hold
	evicted atomic.Int64 // clients asked to close (evicted_clients)
	kick    chan struct{}
	evict   func(owner any, used int64)

	mu      sync.Mutex
	buckets [numBuckets]map[*Entry]struct{} // evictable clients by size; guarded by mu
}

// New returns a Tracker that calls evict (from Run's goroutine) for each
// client it evicts, with the usage it was evicted at; evict must only ask
// the client's own loop to close it.
func New(evict func(owner any, used int64)) *Tracker {
	t := &Tracker{kick: make(chan struct{}, 1), evict: evict}
	for i := range t.buckets {
		t.buckets[i] = make(map[*Entry]struct{})
	}
	return t
}

// Track starts e for a new client; owner is what evict gets back.
func (t *Tracker) Track(e *Entry, owner any) {
	e.owner = owner
	e.bucket = -1
}

// bucketOf is the bucket for a usage, as Redis' getMemUsageBucket.
func bucketOf(used int64) int8 {
	if used <= 0 {
		return 0
	}
	b := 63 - bits.LeadingZeros64(uint64(used)) // floor(log2)
	return int8(min(max(b, minLog), maxLog) - minLog)
}

// Update records the client's usage; evictable says whether it may be
// evicted (not NO-EVICT). Called by the client's loop only.
func (t *Tracker) Update(e *Entry, used int64, evictable bool) {
	if e.evicting.Load() {
		return // leaving: its last figure stays pending until Forget
	}
	if old := e.used.Load(); old != used { // only this loop writes it: no read-modify-write needed
		e.used.Store(used)
		t.total.Add(used - old)
	}
	limit := t.limit.Load()
	want := int8(-1)
	if limit > 0 && evictable {
		want = bucketOf(used)
	}
	if want != e.bucket {
		t.mu.Lock()
		t.move(e, want)
		t.mu.Unlock()
	}
	if limit > 0 && t.total.Load()-t.pending.Load() >= limit {
		t.Kick()
	}
}

// move puts e in bucket want (-1: none). REQUIRES: t.mu held.
func (t *Tracker) move(e *Entry, want int8) {
	if e.bucket >= 0 {
		delete(t.buckets[e.bucket], e)
	}
	if want >= 0 {
		t.buckets[want][e] = struct{}{}
	}
	e.bucket = want
}

// Forget removes a closed client's usage. Called by its loop, once.
func (t *Tracker) Forget(e *Entry) {
	t.mu.Lock()
	t.move(e, -1)
	t.mu.Unlock()
	t.total.Add(-e.used.Swap(0))
	if e.evicting.Load() {
		t.pending.Add(-e.pending.Load())
	}
}

// SetLimit sets the eviction limit in bytes (0: off; see Limit). Clients
// join or leave the buckets at their next Update; a lower limit is
// enforced at once for the clients already in buckets.
func (t *Tracker) SetLimit(limit int64) {
	t.limit.Store(limit)
	t.Kick()
}

// Kick wakes the evictor if the total is at or over the limit; the
// server's tick calls it too, for clients that went quiet.
func (t *Tracker) Kick() {
	if limit := t.limit.Load(); limit <= 0 || t.total.Load()-t.pending.Load() < limit {
		return
	}
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

// Total is the memory of every tracked client; Evicted the number of
// clients evicted since start.
func (t *Tracker) Total() int64   { return t.total.Load() }
func (t *Tracker) Evicted() int64 { return t.evicted.Load() }

// Run is the evictor: it evicts each time it is kicked, until stop is
// closed.
func (t *Tracker) Run(stop <-chan struct{}) {
	for {
		select {
		case <-t.kick:
			t.evictOver()
		case <-stop:
			return
		}
	}
}

// evictOver asks clients to close, largest buckets first, until the total
// less what is already leaving is under the limit, as Redis' evictClients.
// It reports how many it evicted.
func (t *Tracker) evictOver() int {
	type victim struct {
		owner any
		used  int64
	}
	var victims []victim
	t.mu.Lock()
	for b := numBuckets - 1; b >= 0; b-- {
		for e := range t.buckets[b] {
			limit := t.limit.Load()
			if limit <= 0 || t.total.Load()-t.pending.Load() < limit {
				break
			}
			delete(t.buckets[b], e)
			if e.evicting.Swap(true) {
				continue
			}
			used := e.used.Load()
			e.pending.Store(used)
			t.pending.Add(used)
			victims = append(victims, victim{e.owner, used})
		}
	}
	t.mu.Unlock()
	// Outside the lock: evict wakes another loop and logs.
	for _, v := range victims {
		t.evicted.Add(1)
		t.evict(v.owner, v.used)
	}
	return len(victims)
}
