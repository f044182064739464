//go:build !race

// The race detector allocates on its own, so allocation counts are only
// meaningful without it (as in fasthttp's allocation_test.go).

package loadgen

import (
	"net"
	"testing"
	"time"
)

// fakeConn answers every SET with +OK and every GET with a hit or a miss,
// from pre-built bytes, so the worker's loop can be measured without a
// network. It is not safe for concurrent use.
type fakeConn struct {
	net.Conn // nil: only Read, Write and Close are used
	pending  []byte
	getHit   bool
}

var (
	okReply   = []byte("+OK\r\n")
	hitReply  = []byte("$5\r\nxxxxx\r\n")
	missReply = []byte("$-1\r\n")
)

func (f *fakeConn) Write(b []byte) (int, error) {
	// Requests start with '*'; the key prefix and data hold none.
	for i := 0; i < len(b); i++ {
		if b[i] != '*' {
			continue
		}
		switch {
		case b[i+1] == '3':
			f.pending = append(f.pending, okReply...)
		case f.getHit:
			f.pending = append(f.pending, hitReply...)
		default:
			f.pending = append(f.pending, missReply...)
		}
		f.getHit = !f.getHit
	}
	return len(b), nil
}

func (f *fakeConn) Read(b []byte) (int, error) {
	n := copy(b, f.pending)
	f.pending = f.pending[:copy(f.pending, f.pending[n:])]
	return n, nil
}

func (f *fakeConn) Close() error { return nil }

func TestSteadyStateAllocs(t *testing.T) {
	for _, pattern := range []KeyPattern{Random, Sequential, Gaussian, Parallel} {
		for _, pipeline := range []int{1, 16} {
			cfg := DefaultConfig()
			cfg.Ratio = Ratio{1, 3}
			cfg.SetPattern, cfg.GetPattern = pattern, pattern
			cfg.Pipeline = pipeline
			cfg.TestTime = time.Hour
			fc := &fakeConn{pending: make([]byte, 0, 64<<10)}
			var errs errorSink
			w := newWorker(0, 1, fc, &cfg, newRequestBuilder(cfg.KeyPrefix, cfg.DataSize), &errs)
			base := time.Now()
			step := func() {
				if _, err := w.fill(base); err != nil {
					t.Fatal(err)
				}
				if err := w.read(); err != nil {
					t.Fatal(err)
				}
				if err := w.consume(time.Since(base)); err != nil {
					t.Fatal(err)
				}
			}
			step() // warm up buffers
			if a := testing.AllocsPerRun(1000, step); a != 0 {
				t.Errorf("pattern %c pipeline %d: %v allocs per fill/read/consume; want 0", pattern, pipeline, a)
			}
			st := w.stats
			if st[opSet].Ops == 0 || st[opGet].Hits == 0 || st[opGet].Misses == 0 || st[opSet].Errors+st[opGet].Errors != 0 {
				t.Errorf("pattern %c pipeline %d: unexpected stats sets=%+v gets hits=%d misses=%d errors=%d",
					pattern, pipeline, st[opSet].Ops, st[opGet].Hits, st[opGet].Misses, st[opGet].Errors)
			}
		}
	}
}

func TestScanAndBuildAllocs(t *testing.T) {
	rb := newRequestBuilder("memtier-", 32)
	buf := make([]byte, 0, 4096)
	replies := []byte("+OK\r\n$3\r\nabc\r\n$-1\r\n*2\r\n$1\r\na\r\n:1\r\n-ERR x\r\n")
	var h Histogram
	a := testing.AllocsPerRun(1000, func() {
		buf = rb.appendSet(buf[:0], 1234567)
		buf = rb.appendGet(buf, 7654321)
		for b := replies; len(b) > 0; {
			n, _, err := scanReply(b)
			if err != nil || n == 0 {
				t.Fatalf("scan: n=%d err=%v", n, err)
			}
			b = b[n:]
		}
		h.Record(1234 * time.Microsecond)
	})
	if a != 0 {
		t.Fatalf("%v allocs per build+scan+record; want 0", a)
	}
}
