package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// op is the request type; it indexes per-type stats.
type op uint8

const (
	opSet op = iota
	opGet
	numOps
)

func (o op) String() string {
	if o == opSet {
		return "SET"
	}
	return "GET"
}

// OpStats are the counters of one request type (or of all, in Result.Total).
type OpStats struct {
	// Ops counts replies received (requests completed).
	Ops uint64
	// Hits and Misses count GET replies with a value and null GET replies.
	Hits, Misses uint64
	// Errors counts error replies and replies of the wrong shape (a SET
	// answered by anything but a status, a GET by anything but a bulk or null).
	Errors uint64
	// BytesSent and BytesReceived count request and reply bytes.
	BytesSent, BytesReceived uint64
	// Latency holds the time from writing a request to parsing its reply.
	Latency Histogram
}

func (s *OpStats) add(o *OpStats) {
	s.Ops += o.Ops
	s.Hits += o.Hits
	s.Misses += o.Misses
	s.Errors += o.Errors
	s.BytesSent += o.BytesSent
	s.BytesReceived += o.BytesReceived
	s.Latency.Merge(&o.Latency)
}

// Result is the outcome of one run.
type Result struct {
	Config Config
	// Duration runs from the moment every connection was released to the
	// moment the last one finished (outstanding replies included).
	Duration   time.Duration
	Sets, Gets OpStats
	// ErrorSamples holds the first few error replies, quoted.
	ErrorSamples []string
}

// Total returns the Sets and Gets counters merged.
func (r *Result) Total() OpStats {
	var t OpStats
	t.add(&r.Sets)
	t.add(&r.Gets)
	return t
}

// Load is a workload with its connections open, ready to Run once. Dial it
// before reading the server's CPU counters so connection set-up is not
// charged to the run, then Run, then Close.
type Load struct {
	cfg     Config
	workers []*worker
	errs    errorSink
	ran     atomic.Bool
}

// Dial validates cfg and opens its Clients × Threads connections.
func Dial(ctx context.Context, cfg Config) (*Load, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	l := &Load{cfg: cfg}
	rb := newRequestBuilder(cfg.KeyPrefix, cfg.DataSize)
	n := cfg.Connections()
	d := net.Dialer{Timeout: 5 * time.Second}
	for i := 0; i < n; i++ {
		c, err := d.DialContext(ctx, "tcp", cfg.Addr)
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("loadgen: connection %d of %d: %w", i+1, n, err)
		}
		l.workers = append(l.workers, newWorker(i, n, c, &l.cfg, rb, &l.errs))
	}
	return l, nil
}

// Close closes every connection. It is safe to call more than once.
func (l *Load) Close() error {
	var errs []error
	for _, w := range l.workers {
		if err := w.conn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// drainTimeout bounds how long a time-bound run waits for outstanding replies
// after TestTime, so a stalled server ends the run with an error rather than
// hanging it.
const drainTimeout = 30 * time.Second

// Run runs the workload once and returns its result. On error (a connection
// failure, a protocol error, ctx ending) it stops every connection and
// returns what was measured so far along with the error.
func (l *Load) Run(ctx context.Context) (*Result, error) {
	if l.ran.Swap(true) {
		return nil, errors.New("loadgen: Run called twice on one Load")
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var timer *time.Timer
	if l.cfg.TestTime > 0 {
		timer = time.AfterFunc(l.cfg.TestTime+drainTimeout, func() {
			cancel(fmt.Errorf("loadgen: replies still outstanding %v after the %v test time", drainTimeout, l.cfg.TestTime))
		})
		defer timer.Stop()
	}
	// Unblock every worker's Read/Write when the run is cancelled.
	stopWatch := make(chan struct{})
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		select {
		case <-runCtx.Done():
			past := time.Unix(1, 0)
			for _, w := range l.workers {
				_ = w.conn.SetDeadline(past)
			}
		case <-stopWatch:
		}
	}()

	var wg sync.WaitGroup
	// t0 is written before close(start) and read after <-start, which the
	// memory model orders: every worker sees the same base time.
	var t0 time.Time
	start := make(chan struct{})
	workErrs := make([]error, len(l.workers))
	for i, w := range l.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if err := w.run(t0, l.cfg.TestTime); err != nil {
				workErrs[i] = fmt.Errorf("connection %d: %w", i, err)
				cancel(workErrs[i])
			}
		}()
	}
	t0 = time.Now()
	close(start)
	wg.Wait()
	elapsed := time.Since(t0)
	close(stopWatch)
	<-watchDone

	res := &Result{Config: l.cfg, Duration: elapsed, ErrorSamples: l.errs.samples()}
	for _, w := range l.workers {
		res.Sets.add(&w.stats[opSet])
		res.Gets.add(&w.stats[opGet])
	}
	if err := context.Cause(runCtx); err != nil {
		if ctx.Err() != nil {
			return res, fmt.Errorf("loadgen: %w", context.Cause(ctx))
		}
		return res, fmt.Errorf("loadgen: %w", err)
	}
	return res, nil
}

// RunOnce dials, runs and closes cfg.
func RunOnce(ctx context.Context, cfg Config) (*Result, error) {
	l, err := Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.Run(ctx)
}

// inflight is one request written and not yet answered.
type inflight struct {
	sent time.Duration // since the run's start
	size uint32        // request bytes
	op   op
}

// worker drives one connection. Only its own goroutine touches it during Run.
type worker struct {
	conn net.Conn
	cfg  *Config
	rb   *requestBuilder
	errs *errorSink

	wbuf       []byte
	rbuf       []byte
	rpos, rend int // unconsumed reply bytes are rbuf[rpos:rend]

	ring           []inflight // len == Pipeline
	head, inFlight int        // oldest outstanding request, count

	setKeys, getKeys keyGen
	ratioPos         int
	sent             uint64
	phase            float64 // this connection's offset in RateLimit's schedule, in intervals (allowed)

	stats [numOps]OpStats
}

const readBufferSize = 16 << 10

func newWorker(i, n int, c net.Conn, cfg *Config, rb *requestBuilder, errs *errorSink) *worker {
	rng := rand.New(rand.NewPCG(cfg.Seed+uint64(i), 0x9e3779b97f4a7c15))
	wcap := min(cfg.Pipeline*rb.maxRequestSize(), 1<<20)
	return &worker{
		conn:    c,
		cfg:     cfg,
		rb:      rb,
		errs:    errs,
		wbuf:    make([]byte, 0, wcap),
		rbuf:    make([]byte, readBufferSize),
		ring:    make([]inflight, cfg.Pipeline),
		phase:   float64(i) / float64(n),
		setKeys: newKeyGen(cfg.SetPattern, cfg, i, n, rng),
		getKeys: newKeyGen(cfg.GetPattern, cfg, i, n, rng),
	}
}

func (w *worker) nextOp() op {
	o := opGet
	if w.ratioPos < w.cfg.Ratio.Set {
		o = opSet
	}
	if w.ratioPos++; w.ratioPos == w.cfg.Ratio.Set+w.cfg.Ratio.Get {
		w.ratioPos = 0
	}
	return o
}

// fill tops the pipeline window up and writes the new requests in one write.
// It reports whether the request budget is exhausted.
func (w *worker) fill(base time.Time) (exhausted bool, err error) {
	p := len(w.ring)
	buf := w.wbuf[:0]
	first := w.inFlight
	allowed := w.allowed(time.Since(base))
	limit := uint64(0)
	if w.cfg.TestTime == 0 {
		limit = uint64(w.cfg.Requests)
	}
	for w.inFlight < p && w.sent < allowed {
		if limit > 0 && w.sent == limit {
			exhausted = true
			break
		}
		slot := &w.ring[w.slot(w.inFlight)]
		before := len(buf)
		slot.op = w.nextOp()
		if slot.op == opSet {
			buf = w.rb.appendSet(buf, w.setKeys.key())
		} else {
			buf = w.rb.appendGet(buf, w.getKeys.key())
		}
		slot.size = uint32(len(buf) - before)
		w.inFlight++
		w.sent++
	}
	w.wbuf = buf
	if len(buf) == 0 {
		return exhausted, nil
	}
	now := time.Since(base)
	for i := first; i < w.inFlight; i++ {
		w.ring[w.slot(i)].sent = now
	}
	_, err = w.conn.Write(buf)
	return exhausted, err
}

// allowed is how many requests the connection may have sent by now (time
// since the run's start) under RateLimit: request k is due at (k +
// phase)/RateLimit seconds, the phase spreading the connections' schedules
// over one interval. Without a rate limit, no bound.
func (w *worker) allowed(now time.Duration) uint64 {
	if w.cfg.RateLimit <= 0 {
		return math.MaxUint64
	}
	return uint64(max(now.Seconds()*float64(w.cfg.RateLimit)-w.phase, 0)) + 1
}

// waitDue sleeps until the connection's next request is due (RateLimit).
func (w *worker) waitDue(base time.Time) {
	due := time.Duration((float64(w.sent) + w.phase) / float64(w.cfg.RateLimit) * float64(time.Second))
	time.Sleep(due - time.Since(base))
}

// slot maps the i-th outstanding request to its ring index.
func (w *worker) slot(i int) int {
	s := w.head + i
	if s >= len(w.ring) {
		s -= len(w.ring)
	}
	return s
}

// run drives the connection until its request budget or testTime is used up
// and every reply has arrived.
func (w *worker) run(base time.Time, testTime time.Duration) error {
	stopping := false
	for {
		if !stopping && w.inFlight < len(w.ring) {
			exhausted, err := w.fill(base)
			if err != nil {
				return err
			}
			stopping = exhausted
		}
		if w.inFlight == 0 {
			if stopping || w.cfg.RateLimit <= 0 {
				return nil
			}
			// Rate-limited, nothing outstanding: wait for the next request's turn.
			w.waitDue(base)
			stopping = testTime > 0 && time.Since(base) >= testTime
			continue
		}
		if err := w.read(); err != nil {
			return err
		}
		now := time.Since(base)
		if err := w.consume(now); err != nil {
			return err
		}
		if testTime > 0 && now >= testTime {
			stopping = true
		}
	}
}

// read reads more reply bytes, compacting or (for an unusually large reply)
// growing the buffer first when it is full.
func (w *worker) read() error {
	if w.rend == len(w.rbuf) {
		if w.rpos > 0 {
			w.rend = copy(w.rbuf, w.rbuf[w.rpos:w.rend])
			w.rpos = 0
		} else {
			nb := make([]byte, 2*len(w.rbuf))
			copy(nb, w.rbuf[:w.rend])
			w.rbuf = nb
		}
	}
	n, err := w.conn.Read(w.rbuf[w.rend:])
	w.rend += n
	if err != nil {
		if n > 0 {
			return nil // handle the bytes; the error repeats on the next read
		}
		return fmt.Errorf("%d replies outstanding: %w", w.inFlight, err)
	}
	return nil
}

// consume accounts every complete reply in the buffer.
func (w *worker) consume(now time.Duration) error {
	for w.inFlight > 0 {
		buf := w.rbuf[w.rpos:w.rend]
		n, kind, err := scanReply(buf)
		if err != nil {
			return fmt.Errorf("%w; bytes: %s", err, quoteSnippet(buf))
		}
		if n == 0 {
			break
		}
		req := &w.ring[w.head]
		st := &w.stats[req.op]
		st.Ops++
		st.BytesSent += uint64(req.size)
		st.BytesReceived += uint64(n)
		st.Latency.Record(now - req.sent)
		switch {
		case kind == replyError:
			st.Errors++
			w.errs.add(req.op, buf[:n])
		case req.op == opGet && kind == replyNull:
			st.Misses++
		case req.op == opGet && buf[0] == '$':
			st.Hits++
		case req.op == opSet && buf[0] == '+':
		default:
			st.Errors++
			w.errs.add(req.op, buf[:n])
		}
		w.rpos += n
		if w.head++; w.head == len(w.ring) {
			w.head = 0
		}
		w.inFlight--
	}
	if w.rpos == w.rend {
		w.rpos, w.rend = 0, 0
	} else if w.inFlight == 0 {
		return fmt.Errorf("reply bytes with no request outstanding: %s", quoteSnippet(w.rbuf[w.rpos:w.rend]))
	}
	return nil
}

func quoteSnippet(b []byte) string {
	const n = 120
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "..."
	}
	return strconv.Quote(string(b))
}

// errorSink keeps the first few error replies for the report. Workers check
// the atomic count before taking the lock, so a flood of errors costs one
// atomic load each.
type errorSink struct {
	n  atomic.Int32
	mu sync.Mutex
	s  []string
}

const maxErrorSamples = 5

func (e *errorSink) add(o op, reply []byte) {
	if e.n.Load() >= maxErrorSamples {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.s) < maxErrorSamples {
		e.s = append(e.s, o.String()+": "+quoteSnippet(reply))
		e.n.Store(int32(len(e.s)))
	}
}

func (e *errorSink) samples() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.s...)
}
