package keyspace

import (
	"fmt"
	"testing"
	"time"
)

// TestSnapshotStepBounds checks each bound of a serialization step alone:
// the keys, the bytes, and the time (read every snapshotClockEvery keys), and
// that steps bounded by time still write every key exactly once.
func TestSnapshotStepBounds(t *testing.T) {
	const n = 1000
	d := newDB()
	for i := range n {
		d.SetString(d.Insert(fmt.Appendf(nil, "key:%06d", i), KindString), []byte("some value of thirty-two bytes.."))
	}
	keys, bytes, took := SnapshotStepKeys, SnapshotStepBytes, SnapshotStepTime
	defer func() { SnapshotStepKeys, SnapshotStepBytes, SnapshotStepTime = keys, bytes, took }()

	for _, c := range []struct {
		name               string
		keys, bytes        int
		time               time.Duration
		started            time.Duration // how long ago the step "began"
		wantPerStep, steps int
	}{
		{"keys", 100, 1 << 30, time.Hour, 0, 100, 11}, // the 11th finds none left
		{"time", 1 << 30, 1 << 30, time.Millisecond, time.Hour, snapshotClockEvery, (n + snapshotClockEvery - 1) / snapshotClockEvery},
		{"no bound reached", 1 << 30, 1 << 30, time.Hour, 0, n, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			SnapshotStepKeys, SnapshotStepBytes, SnapshotStepTime = c.keys, c.bytes, c.time
			ss := &SnapshotPart{}
			ds := &dbSnap{ss: ss, pending: make([]uint64, (d.used+63)/64)}
			for p := range d.used {
				ds.pending[p>>6] |= 1 << (p & 63)
			}
			steps := 0
			for done := false; !done; steps++ {
				before := ss.Keys
				var out []byte
				out, done = ds.next(d, out, time.Now().Add(-c.started))
				if got := ss.Keys - before; !done && got != int64(c.wantPerStep) {
					t.Fatalf("step %d encoded %d keys (%d bytes); want %d", steps, got, len(out), c.wantPerStep)
				}
				if steps > n {
					t.Fatal("the steps do not end")
				}
			}
			if steps != c.steps || ss.Keys != n {
				t.Fatalf("%d steps wrote %d keys; want %d steps and %d keys", steps, ss.Keys, c.steps, n)
			}
		})
	}
}
