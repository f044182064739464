package loadgen

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// KeyPattern selects how keys are drawn from [KeyMin, KeyMax], per memtier's
// --key-pattern letters.
type KeyPattern byte

const (
	// Random draws keys uniformly ("R").
	Random KeyPattern = 'R'
	// Sequential walks the range and wraps ("S"). Each connection starts at
	// its own offset (connection i of n at KeyMin + i·span/n), so the union
	// of the connections covers the whole range after span/n requests each
	// without sharing a counter.
	Sequential KeyPattern = 'S'
	// Gaussian draws from a normal distribution around KeyMedian with
	// KeyStddev, redrawing values outside the range ("G").
	Gaussian KeyPattern = 'G'
	// Parallel gives each connection its own contiguous slice of the range
	// and walks it sequentially ("P").
	Parallel KeyPattern = 'P'
)

func (p KeyPattern) valid() bool {
	return p == Random || p == Sequential || p == Gaussian || p == Parallel
}

// ParseKeyPattern parses "SET:GET" patterns such as "R:R", "S:S", "G:G".
func ParseKeyPattern(s string) (set, get KeyPattern, err error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok || len(a) != 1 || len(b) != 1 {
		return 0, 0, fmt.Errorf("key pattern %q: want two letters like R:R, S:S, G:G or P:P", s)
	}
	set, get = KeyPattern(strings.ToUpper(a)[0]), KeyPattern(strings.ToUpper(b)[0])
	if !set.valid() || !get.valid() {
		return 0, 0, fmt.Errorf("key pattern %q: letters must be R, S, G or P", s)
	}
	return set, get, nil
}

// Ratio is the SET:GET mix: out of every Set+Get requests a connection sends,
// the first Set are SETs and the next Get are GETs.
type Ratio struct{ Set, Get int }

// ParseRatio parses "1:10".
func ParseRatio(s string) (Ratio, error) {
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		return Ratio{}, fmt.Errorf("ratio %q: want SET:GET like 1:10", s)
	}
	set, err1 := strconv.Atoi(a)
	get, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || set < 0 || get < 0 || set+get == 0 {
		return Ratio{}, fmt.Errorf("ratio %q: want two non-negative integers, not both zero", s)
	}
	return Ratio{set, get}, nil
}

func (r Ratio) String() string { return fmt.Sprintf("%d:%d", r.Set, r.Get) }

// Config is one workload against one server. DefaultConfig gives memtier's
// defaults; the zero value is not valid.
type Config struct {
	// Addr is the server's host:port.
	Addr string
	// Ratio is the SET:GET mix. Default 1:10.
	Ratio Ratio
	// SetPattern and GetPattern choose keys for SETs and GETs. Default R:R.
	SetPattern, GetPattern KeyPattern
	// KeyMin and KeyMax bound the key numbers, inclusive. Default 0..10000000.
	KeyMin, KeyMax uint64
	// KeyMedian and KeyStddev shape the Gaussian pattern; 0 means memtier's
	// defaults: the middle of the range and a sixth of its width.
	KeyMedian, KeyStddev float64
	// KeyPrefix is prepended to the key number. Default "memtier-".
	KeyPrefix string
	// DataSize is the SET value size in bytes. Default 32.
	DataSize int
	// Pipeline is the number of requests in flight per connection. Default 1.
	Pipeline int
	// Clients is the number of connections per thread; Threads the number of
	// threads. Connections = Clients × Threads. Defaults 50 and 4.
	Clients, Threads int
	// Requests is the number of requests per connection (default 10000); it
	// is ignored when TestTime > 0.
	Requests int
	// TestTime bounds the run by time instead: connections stop sending new
	// requests after TestTime and wait for their outstanding replies.
	TestTime time.Duration
	// RateLimit caps each connection at this many requests a second (0: as
	// fast as the server answers), as memtier's --rate-limiting: a request
	// is sent no earlier than its turn in the connection's schedule, so
	// servers of different speeds can be compared at the same ops/s, where
	// neither the server nor the client is saturated. Latency is measured
	// from the actual send, as without it.
	RateLimit int
	// Seed seeds the per-connection random sources (connection i uses
	// Seed+i), so runs are repeatable. Default 1.
	Seed uint64
}

// DefaultConfig returns memtier_benchmark's default workload (without Addr).
func DefaultConfig() Config {
	return Config{
		Ratio:      Ratio{1, 10},
		SetPattern: Random,
		GetPattern: Random,
		KeyMin:     0,
		KeyMax:     10_000_000,
		KeyPrefix:  "memtier-",
		DataSize:   32,
		Pipeline:   1,
		Clients:    50,
		Threads:    4,
		Requests:   10_000,
		Seed:       1,
	}
}

// Limits that keep a typo from allocating gigabytes.
const (
	maxDataSize    = 64 << 20
	maxPipeline    = 1 << 16
	maxConnections = 1 << 16
)

// Validate checks c and returns every problem found.
func (c *Config) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("no server address"))
	}
	if c.Ratio.Set < 0 || c.Ratio.Get < 0 || c.Ratio.Set+c.Ratio.Get == 0 {
		errs = append(errs, fmt.Errorf("ratio %v: want non-negative, not both zero", c.Ratio))
	}
	if !c.SetPattern.valid() || !c.GetPattern.valid() {
		errs = append(errs, fmt.Errorf("key pattern %q:%q: want R, S, G or P", c.SetPattern, c.GetPattern))
	}
	if c.KeyMax < c.KeyMin {
		errs = append(errs, fmt.Errorf("key range %d..%d: maximum below minimum", c.KeyMin, c.KeyMax))
	} else if c.KeyMax-c.KeyMin >= 1<<62 {
		errs = append(errs, fmt.Errorf("key range %d..%d: wider than 2^62 keys", c.KeyMin, c.KeyMax))
	}
	if c.DataSize < 0 || c.DataSize > maxDataSize {
		errs = append(errs, fmt.Errorf("data size %d: want 0..%d", c.DataSize, maxDataSize))
	}
	if c.Pipeline < 1 || c.Pipeline > maxPipeline {
		errs = append(errs, fmt.Errorf("pipeline %d: want 1..%d", c.Pipeline, maxPipeline))
	}
	if c.Clients < 1 || c.Threads < 1 || c.Clients*c.Threads > maxConnections {
		errs = append(errs, fmt.Errorf("clients %d × threads %d: want >= 1 each and <= %d connections", c.Clients, c.Threads, maxConnections))
	}
	if c.TestTime < 0 || (c.TestTime == 0 && c.Requests < 1) {
		errs = append(errs, fmt.Errorf("requests %d, test time %v: want requests >= 1 or a positive test time", c.Requests, c.TestTime))
	}
	if c.RateLimit < 0 {
		errs = append(errs, fmt.Errorf("rate limit %d: want >= 0 requests a second per connection", c.RateLimit))
	}
	if c.KeyStddev < 0 {
		errs = append(errs, fmt.Errorf("key stddev %v: want >= 0", c.KeyStddev))
	}
	return errors.Join(errs...)
}

// Connections returns Clients × Threads.
func (c *Config) Connections() int { return c.Clients * c.Threads }

// String describes the workload in memtier's flag vocabulary, for reports.
func (c *Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ratio %v, keys %c:%c %d..%d, data %dB, pipeline %d, %d×%d conns",
		c.Ratio, c.SetPattern, c.GetPattern, c.KeyMin, c.KeyMax, c.DataSize, c.Pipeline, c.Threads, c.Clients)
	if c.RateLimit > 0 {
		fmt.Fprintf(&b, ", %d req/s/conn", c.RateLimit)
	}
	if c.TestTime > 0 {
		fmt.Fprintf(&b, ", %v", c.TestTime)
	} else {
		fmt.Fprintf(&b, ", %d req/conn", c.Requests)
	}
	return b.String()
}
