package netloop

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// What client-side caching costs the clients that do not use it: the hot
// path of a non-tracking client (GET and SET of keys nobody tracks), with
// nobody tracking ("off") and with one client tracking 10,000 keys it read
// ("on"). The tracking client's own reads are measured too ("tracker"):
// recording a read is its price. docs/performance.md has the numbers.

// trackingHotPath is newHotPath plus, with on, a client in default tracking
// mode that has read trackedKeys keys (trk:0 ...), none of which the other
// client's commands touch.
func trackingHotPath(tb testing.TB, on bool) (h *hotPath, tracker *client) {
	tb.Helper()
	h = newHotPath(tb)
	h.run(tb, []byte(hotSetup))
	if !on {
		return h, nil
	}
	tracker = h.srv.newClient(nil)
	tracker.ctx.Now = h.c.ctx.Now
	h.srv.enableTracking(tracker, 0, 0, nil)
	var b strings.Builder
	for i := range trackedKeys {
		b.WriteString(mb("GET", fmt.Sprint("trk:", i)))
	}
	runOn(tb, h.srv, tracker, []byte(b.String()))
	if n := h.srv.track.Keys(); n != trackedKeys {
		tb.Fatalf("tracking table holds %d keys; want %d", n, trackedKeys)
	}
	return h, tracker
}

const trackedKeys = 10000

func runOn(tb testing.TB, s *Server, c *client, in []byte) []byte {
	c.out = c.out[:0]
	off, closeNow := s.consume(c, in)
	if closeNow || off != len(in) || c.state != connReading {
		tb.Fatalf("consume: off=%d of %d closeNow=%v state=%v", off, len(in), closeNow, c.state)
	}
	return c.out
}

var trackingOthers = []struct{ name, in string }{
	{"GET", mb("GET", "key:000042")},
	{"SET", mb("SET", "key:000042", "value:0042")},
}

// TestTrackingOthersAllocs: a client that does not track allocates nothing
// on GET and SET while another client tracks.
func TestTrackingOthersAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	h, _ := trackingHotPath(t, true)
	for _, hc := range trackingOthers {
		buf := []byte(strings.Repeat(hc.in, 16))
		h.run(t, buf)
		if n := testing.AllocsPerRun(1000, func() { h.run(t, buf) }); n != 0 {
			t.Errorf("%s while another client tracks: %v allocs per run; want 0", hc.name, n)
		}
	}
}

func BenchmarkTrackingOthers(b *testing.B) {
	for _, hc := range trackingOthers {
		for _, mode := range []string{"off", "on"} {
			for _, depth := range []int{1, 16} {
				b.Run(fmt.Sprintf("%s/tracking=%s/pipeline=%d", hc.name, mode, depth), func(b *testing.B) {
					h, _ := trackingHotPath(b, mode == "on")
					buf := []byte(strings.Repeat(hc.in, depth))
					h.run(b, buf)
					b.ReportAllocs()
					b.ResetTimer()
					cpu := processCPU()
					for range b.N {
						h.run(b, buf)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*depth), "ns/cmd")
					b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*depth), "cpu-ns/cmd")
				})
			}
		}
	}
	// The tracking client's own GET of a key it already tracks: the record
	// is a stripe lock and two map lookups.
	b.Run("tracker/GET/pipeline=16", func(b *testing.B) {
		h, tracker := trackingHotPath(b, true)
		buf := []byte(strings.Repeat(mb("GET", "trk:42"), 16))
		runOn(b, h.srv, tracker, buf)
		b.ReportAllocs()
		b.ResetTimer()
		cpu := processCPU()
		for range b.N {
			runOn(b, h.srv, tracker, buf)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/cmd")
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*16), "cpu-ns/cmd")
	})
}

// processCPU is the CPU time the process has used (user and system), in
// nanoseconds: on a machine shared with other work, wall time per command
// mostly measures the waits for a CPU, CPU time what the command costs.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return (time.Duration(ru.Utime.Nano()) + time.Duration(ru.Stime.Nano())).Nanoseconds()
}

// BenchmarkTrackingWriteMiss is what a write of a key nobody tracks pays
// while the table holds trackedKeys keys: the Changed hook's work for one
// key (a hash, a stripe lock, a map miss).
func BenchmarkTrackingWriteMiss(b *testing.B) {
	h, _ := trackingHotPath(b, true)
	key := []byte("key:000042")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h.srv.track.Invalidate(0, key, true)
	}
}
