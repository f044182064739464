package diaghttp

import (
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/svcdb/svcdb/core/status"
)

// Server-side rates for /debug/api/metrics, so the UI needs no arithmetic.
// One goroutine (started by Server.Start, stopped by Shutdown) reads the
// totals once per second from the Source's snapshots (atomic loads on the
// data path's side) into a ring of the last rateSlots samples; a request
// compares the newest sample with the one 1 or 60 samples older. The ring's
// mutex is taken by that goroutine and by HTTP requests only.

const (
	rateInterval = time.Second
	// rateSlots is 60 intervals: the newest sample and the one 60 s before.
	rateSlots = 61
)

// rateTotals are the server's cumulative counters at one instant.
type rateTotals struct {
	at                    time.Time
	commands              int64
	hits, misses, expired int64
	netIn, netOut         int64
	calls                 []int64 // by command ID; the slot's slice is reused
}

type rateSampler struct {
	src Source

	mu     sync.Mutex // the sampler and readers; never the data path
	ring   [rateSlots]rateTotals
	head   int // next slot written
	filled int // slots holding a sample, 0..rateSlots

	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

func newRateSampler(src Source) *rateSampler {
	return &rateSampler{src: src, stop: make(chan struct{}), done: make(chan struct{})}
}

// run samples at once and then every rateInterval until halt.
func (r *rateSampler) run() {
	defer close(r.done)
	r.sample(time.Now())
	t := time.NewTicker(rateInterval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case now := <-t.C:
			r.sample(now)
		}
	}
}

// halt stops run and waits for it; only call it once run was started.
func (r *rateSampler) halt() {
	r.stopOnce.Do(func() { close(r.stop) })
	<-r.done
}

// sample records the totals at now.
func (r *rateSampler) sample(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	readTotals(r.src, &r.ring[r.head], now)
	r.head = (r.head + 1) % rateSlots
	r.filled = min(r.filled+1, rateSlots)
}

// readTotals stores src's totals at now in t, reusing t.calls: atomic loads
// of the published counters only. Bundles sample with it too (rates.json).
func readTotals(src Source, t *rateTotals, now time.Time) {
	net := src.Net()
	var hits, misses, expired int64
	for _, sn := range src.Shards() {
		hits += sn.Hits
		misses += sn.Misses
		expired += sn.Expired
	}
	t.at = now
	t.commands = net.CommandsProcessed
	t.hits, t.misses, t.expired = hits, misses, expired
	t.netIn, t.netOut = net.NetInputBytes, net.NetOutputBytes
	t.calls = src.CommandCallCounts(t.calls)
}

// rateWindow is the rates over one window. Rates are per second, rounded to
// two decimals.
type rateWindow struct {
	// WindowSecs is the window really used: the one asked for, or fewer
	// seconds while the sampler has not recorded that many yet (0 before
	// its second sample: every rate is then 0).
	WindowSecs           int           `json:"window_secs"`
	OpsPerSec            float64       `json:"ops_per_sec"`
	KeyspaceHitsPerSec   float64       `json:"keyspace_hits_per_sec"`
	KeyspaceMissesPerSec float64       `json:"keyspace_misses_per_sec"`
	NetInputBytesPerSec  float64       `json:"net_input_bytes_per_sec"`
	NetOutputBytesPerSec float64       `json:"net_output_bytes_per_sec"`
	ExpiredKeysPerSec    float64       `json:"expired_keys_per_sec"`
	Commands             []commandRate `json:"commands"`
}

// commandRate is one command's calls over the window; only commands called
// in it are listed, busiest first.
type commandRate struct {
	Name      string  `json:"name"`
	Calls     int64   `json:"calls"`
	OpsPerSec float64 `json:"ops_per_sec"`
}

// rates compares the newest sample with the one secs samples before it (or
// the oldest there is); name gives a command ID's full name.
func (r *rateSampler) rates(secs int, name func(id int) string) rateWindow {
	r.mu.Lock()
	defer r.mu.Unlock()
	w := rateWindow{Commands: []commandRate{}}
	used := min(secs, r.filled-1)
	if used <= 0 {
		return w
	}
	newest := &r.ring[(r.head-1+rateSlots)%rateSlots]
	oldest := &r.ring[(r.head-1-used+2*rateSlots)%rateSlots]
	return rateBetween(newest, oldest, used, name)
}

// rateBetween is the rates from oldest to newest, a window of secs samples.
func rateBetween(newest, oldest *rateTotals, secs int, name func(id int) string) rateWindow {
	w := rateWindow{Commands: []commandRate{}}
	dt := newest.at.Sub(oldest.at).Seconds()
	if dt <= 0 {
		return w
	}
	w.WindowSecs = secs
	// Totals never go back (they count since start), but clamp anyway: a
	// rate is never negative.
	rate := func(a, b int64) float64 { return status.Round2(float64(max(a-b, 0)) / dt) }
	w.OpsPerSec = rate(newest.commands, oldest.commands)
	w.KeyspaceHitsPerSec = rate(newest.hits, oldest.hits)
	w.KeyspaceMissesPerSec = rate(newest.misses, oldest.misses)
	w.NetInputBytesPerSec = rate(newest.netIn, oldest.netIn)
	w.NetOutputBytesPerSec = rate(newest.netOut, oldest.netOut)
	w.ExpiredKeysPerSec = rate(newest.expired, oldest.expired)
	for id, n := range newest.calls {
		var before int64
		if id < len(oldest.calls) {
			before = oldest.calls[id]
		}
		if d := n - before; d > 0 {
			w.Commands = append(w.Commands, commandRate{Name: name(id), Calls: d, OpsPerSec: rate(n, before)})
		}
	}
	slices.SortFunc(w.Commands, func(a, b commandRate) int {
		return cmp.Or(cmp.Compare(b.Calls, a.Calls), cmp.Compare(a.Name, b.Name))
	})
	return w
}
