package harness

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/bench/loadgen"
	"github.com/svcdb/svcdb/core/resp"
)

// pacedLoad is a fixed-rate SET:GET 1:1 load over keys 0..keys-1 ("memtier-<n>",
// as the load generator names them), with latency recorded per second of
// the run. The load generator (bench/loadgen) is closed-loop: it sends as
// fast as replies come back, so a server that stalls simply receives less,
// and its histogram misses the requests it delayed. Here each connection
// has a schedule instead: request k of connection i of n is due at
// (k·n + i)/rate seconds after the start, and one is in flight per
// connection. A request sent late because the previous reply was late is
// timed from when it was due (the correction for coordinated omission, as
// wrk2 does), so a stall shows as the queue it builds; one sent on time is
// timed from its write, so the client's timer slack is never charged to the
// server.
//
// Invariants: only a connection's own goroutine touches its pacedConn
// during run; per-second histograms are merged only after every goroutine
// has returned.
type pacedLoad struct {
	addr      string
	rate      float64 // requests per second, all connections together
	conns     int
	keys      uint64
	valueSize int
	seed      uint64
	cs        []*pacedConn
}

// pacedConn is one connection of a pacedLoad and what it measured.
type pacedConn struct {
	conn net.Conn
	r    *bufio.Reader
	wbuf []byte
	rng  *rand.Rand
	// timer waits for the next request's due time.
	timer *time.Timer
	// secs[s] holds the latencies of the requests due in second s.
	secs   []*loadgen.Histogram
	errors uint64
	first  string // first unexpected reply
}

// pacedResult is a pacedLoad run: per-second histograms (by due time) and
// error replies.
type pacedResult struct {
	Seconds []*loadgen.Histogram
	Errors  uint64
	// FirstError is the first unexpected reply, quoted.
	FirstError string
}

// open dials the connections; close closes them. Dial before the run so
// that connection set-up is not part of what is measured.
func (p *pacedLoad) open(ctx context.Context) error {
	if p.rate <= 0 || p.conns < 1 || p.keys < 1 {
		return fmt.Errorf("paced load: rate %v, connections %d, keys %d: want > 0", p.rate, p.conns, p.keys)
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	for i := range p.conns {
		c, err := d.DialContext(ctx, "tcp", p.addr)
		if err != nil {
			p.close()
			return fmt.Errorf("paced load: connection %d of %d: %w", i+1, p.conns, err)
		}
		p.cs = append(p.cs, &pacedConn{conn: c, r: bufio.NewReaderSize(c, 16<<10),
			rng: rand.New(rand.NewPCG(p.seed+uint64(i), 0x2545f4914f6cdd1d))})
	}
	return nil
}

func (p *pacedLoad) close() {
	for _, c := range p.cs {
		c.conn.Close()
	}
	p.cs = nil
}

// run sends the load from start (which may lie a little in the future)
// and returns what it measured: second s of the result holds the requests
// due in [start+s, start+s+1s). It sends every request due before the
// time stopAt holds (nanoseconds after start; it may be lowered while the
// load runs), late ones included, so a stall near the end is measured in
// full; it returns once they are answered, or when ctx ends. A pacedLoad
// runs once.
func (p *pacedLoad) run(ctx context.Context, start time.Time, stopAt *atomic.Int64) (*pacedResult, error) {
	if len(p.cs) == 0 {
		return nil, errors.New("paced load: not open")
	}
	value := bytes.Repeat([]byte{'x'}, p.valueSize)
	// Unblock every connection's read or write when ctx ends.
	unwatch := context.AfterFunc(ctx, func() {
		for _, c := range p.cs {
			_ = c.conn.SetDeadline(time.Unix(1, 0))
		}
	})
	defer unwatch()
	interval := time.Duration(float64(len(p.cs)) / p.rate * float64(time.Second))
	errs := make([]error, len(p.cs))
	var wg sync.WaitGroup
	for i, c := range p.cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			offset := time.Duration(float64(i) / p.rate * float64(time.Second))
			if err := c.run(ctx, start, offset, interval, p.keys, value, stopAt); err != nil {
				errs[i] = fmt.Errorf("paced load, connection %d: %w", i+1, err)
			}
		}()
	}
	wg.Wait()
	res := &pacedResult{}
	for _, c := range p.cs {
		for s, h := range c.secs {
			for len(res.Seconds) <= s {
				res.Seconds = append(res.Seconds, &loadgen.Histogram{})
			}
			if h != nil {
				res.Seconds[s].Merge(h)
			}
		}
		res.Errors += c.errors
		if res.FirstError == "" {
			res.FirstError = c.first
		}
	}
	if err := ctx.Err(); err != nil {
		return res, context.Cause(ctx)
	}
	return res, errors.Join(errs...)
}

// pacedDrain bounds the wait for a reply once the load stops, and any wait
// for a reply at all: a server that stops answering fails the run.
const pacedDrain = 30 * time.Second

func (c *pacedConn) run(ctx context.Context, start time.Time, offset, interval time.Duration, keys uint64, value []byte, stopAt *atomic.Int64) error {
	for k := 0; ; k++ {
		due := offset + time.Duration(k)*interval
		if int64(due) >= stopAt.Load() {
			return nil
		}
		now := time.Since(start)
		from := due // behind schedule: the server made us late
		if now < due {
			if c.timer == nil {
				c.timer = time.NewTimer(due - now)
			} else {
				c.timer.Reset(due - now)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-c.timer.C:
			}
			if int64(due) >= stopAt.Load() {
				return nil
			}
			from = -1 // on time: timed from the write
		}
		c.wbuf = c.wbuf[:0]
		key := c.rng.Uint64N(keys)
		set := k%2 == 0
		if set {
			c.wbuf = resp.AppendArrayHeader(c.wbuf, 3)
			c.wbuf = resp.AppendBulkString(c.wbuf, "SET")
		} else {
			c.wbuf = resp.AppendArrayHeader(c.wbuf, 2)
			c.wbuf = resp.AppendBulkString(c.wbuf, "GET")
		}
		c.wbuf = appendLoadKey(c.wbuf, key)
		if set {
			c.wbuf = resp.AppendBulk(c.wbuf, value)
		}
		if from < 0 {
			from = time.Since(start)
		}
		_ = c.conn.SetDeadline(time.Now().Add(pacedDrain))
		if _, err := c.conn.Write(c.wbuf); err != nil {
			return err
		}
		if err := c.readReply(set); err != nil {
			return err
		}
		lat := time.Since(start) - from
		s := int(due / time.Second)
		for len(c.secs) <= s {
			c.secs = append(c.secs, nil)
		}
		if c.secs[s] == nil {
			c.secs[s] = &loadgen.Histogram{}
		}
		c.secs[s].Record(lat)
	}
}

// appendLoadKey appends "memtier-<n>" as a bulk string: the load
// generator's default key names, so the paced load reads and overwrites
// the keys the fill wrote.
func appendLoadKey(b []byte, n uint64) []byte {
	var key [32]byte
	return resp.AppendBulk(b, strconv.AppendUint(append(key[:0], loadKeyPrefix...), n, 10))
}

// loadKeyPrefix is loadgen.DefaultConfig's KeyPrefix.
var loadKeyPrefix = loadgen.DefaultConfig().KeyPrefix

// readReply reads one reply: +OK for a SET, a bulk string for a GET (every
// key exists); anything else counts as an error. Aggregate replies are not
// expected from SET or GET: one ends the run, as the stream is lost.
func (c *pacedConn) readReply(set bool) error {
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return err
	}
	ok := false
	switch line[0] {
	case '+':
		ok = set && string(line) == "+OK\r\n"
	case '$':
		n, err := strconv.Atoi(string(bytes.TrimSpace(line[1:])))
		if err != nil {
			return fmt.Errorf("bad bulk header %q", line)
		}
		if n >= 0 {
			if _, err := c.r.Discard(n + 2); err != nil {
				return err
			}
			ok = !set
		}
	case '*', '%', '~', '>':
		return fmt.Errorf("unexpected reply %q", line)
	}
	if !ok {
		c.errors++
		if c.first == "" {
			c.first = strconv.Quote(string(line))
		}
	}
	return nil
}
