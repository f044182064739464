package netloop

import (
	"fmt"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/netloop/pubsub"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// What keyspace notifications cost a write: SET and HSET with
// notify-keyspace-events off (one atomic load per event), on with nobody
// subscribed (one atomic load: nothing is formatted), and on with a
// pattern subscriber that gets every event (the messages encoded; the
// subscriber is the writing client itself, so no loop is woken: the
// mailbox append another subscriber would cost is not in it).
// docs/performance.md has the numbers.

var notifyWrites = []struct{ name, in string }{
	{"SET", mb("SET", "key:000042", "value:0042")},
	{"HSET", mb("HSET", "hash:1", "field:42", "v")},
}

func notifyHotPath(tb testing.TB, mode string) *hotPath {
	tb.Helper()
	h := newHotPath(tb)
	h.run(tb, []byte(hotSetup))
	if mode == "off" {
		return h
	}
	classes, _ := keyspace.ParseNotifyClasses("KEA")
	h.srv.notifyOn.Store(uint32(classes))
	h.srv.rt.SetNotify(classes, h.srv.notifyKeyspace)
	if mode == "subscribed" {
		h.c.ctx.RESP3 = true
		h.c.resp3.Store(true)
		h.srv.subscribe(h.c, pubsub.Pattern, [][]byte{[]byte("__key*__:*")})
	}
	return h
}

// TestNotifyOffAllocs: with notifications off, SET and HSET allocate
// nothing (the hot path's promise); with them on and nobody subscribed,
// neither.
func TestNotifyOffAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, mode := range []string{"off", "on"} {
		h := notifyHotPath(t, mode)
		for _, w := range notifyWrites {
			buf := []byte(strings.Repeat(w.in, 16))
			h.run(t, buf)
			if n := testing.AllocsPerRun(1000, func() { h.run(t, buf) }); n != 0 {
				t.Errorf("%s with notifications %s: %v allocs per run; want 0", w.name, mode, n)
			}
		}
	}
}

func BenchmarkNotify(b *testing.B) {
	for _, w := range notifyWrites {
		for _, mode := range []string{"off", "on", "subscribed"} {
			b.Run(fmt.Sprintf("%s/notify=%s/pipeline=16", w.name, mode), func(b *testing.B) {
				h := notifyHotPath(b, mode)
				buf := []byte(strings.Repeat(w.in, 16))
				h.run(b, buf)
				b.ReportAllocs()
				b.ResetTimer()
				cpu := processCPU()
				for range b.N {
					h.run(b, buf)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/cmd")
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N*16), "cpu-ns/cmd")
			})
		}
	}
}
