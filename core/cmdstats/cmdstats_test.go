package cmdstats

import (
	"sync"
	"testing"
	"time"
)

func TestBucketsTileTheRange(t *testing.T) {
	// Every bucket starts where the previous one ended, and bucketOf maps
	// both ends of each bucket back to it.
	var prevHi uint64
	for i := range NumBuckets {
		lo, hi := bucketBounds(i)
		if lo != prevHi || hi <= lo {
			t.Fatalf("bucket %d = [%d, %d) after %d", i, lo, hi, prevHi)
		}
		prevHi = hi
		for _, us := range []uint64{lo, hi - 1} {
			if got := bucketOf(int64(us) * 1000); got != i {
				t.Fatalf("bucketOf(%d µs) = %d, want %d", us, got, i)
			}
		}
		if hi-lo > max(1, lo/4) {
			t.Fatalf("bucket %d [%d, %d) wider than a quarter of its start", i, lo, hi)
		}
	}
	if got := bucketOf(int64(time.Hour * 100)); got != NumBuckets-1 {
		t.Fatalf("100h lands in bucket %d", got)
	}
	if got := bucketOf(-5); got != 0 {
		t.Fatalf("negative lands in bucket %d", got)
	}
	for k := range Pow2Bounds {
		n := bucketsBelowPow2(k)
		_, hi := bucketBounds(n - 1)
		if hi != 1<<k {
			t.Fatalf("bucketsBelowPow2(%d): last bucket ends at %d µs", k, hi)
		}
	}
}

func TestPercentilesAndCumulative(t *testing.T) {
	set := NewSet(3)
	r := set.NewRecorder()
	// 1..1000 µs, one call each.
	for us := 1; us <= 1000; us++ {
		r.Call(1, int64(us)*1000)
	}
	c := set.Snapshot().Commands[1]
	if c.Calls != 1000 || c.Latency.Count != 1000 || c.Max != time.Millisecond {
		t.Fatalf("calls %d count %d max %v", c.Calls, c.Latency.Count, c.Max)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.9, 900 * time.Microsecond}, {0.99, 990 * time.Microsecond}} {
		got := c.Latency.Percentile(tc.q)
		if diff := got - tc.want; diff < -tc.want/8 || diff > tc.want/8 {
			t.Errorf("p%v = %v, want about %v", tc.q*100, got, tc.want)
		}
	}
	// Samples below 2^k µs: exact counts (2^k - 1 of them, up to 1000).
	for k, want := range map[int]int64{0: 0, 1: 1, 4: 15, 9: 511, 10: 1000} {
		if got := c.Latency.Cumulative(k); got != want {
			t.Errorf("Cumulative(%d) = %d, want %d", k, got, want)
		}
	}
	if (&Histogram{}).Percentile(0.99) != 0 {
		t.Error("empty histogram has a percentile")
	}
}

func TestRejectedFailedErrorsAndReset(t *testing.T) {
	set := NewSet(4)
	a, b := set.NewRecorder(), set.NewRecorder()
	a.Call(2, 5000)
	a.Failed(2)
	b.Call(2, 7000)
	b.Rejected(3)
	a.ErrorReply([]byte("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"))
	b.ErrorReply([]byte("-ERR syntax error\r\n"))
	b.ErrorReply([]byte("-ERR\r\n"))
	b.ErrorReply([]byte("-SOMETHINGNEW x\r\n"))
	b.ErrorReply([]byte("!21\r\nSYNTAX invalid syntax\r\n"))
	snap := set.Snapshot()
	c := snap.Commands[2]
	if c.Calls != 2 || c.Failed != 1 || c.Rejected != 0 || c.Total != 12*time.Microsecond {
		t.Fatalf("command 2: %+v", *c)
	}
	if r := snap.Commands[3]; r == nil || r.Rejected != 1 || r.Calls != 0 {
		t.Fatalf("command 3: %+v", r)
	}
	if snap.Commands[0] != nil {
		t.Fatal("command 0 was never called")
	}
	want := map[string]int64{"ERR": 2, "WRONGTYPE": 1, "OTHER": 2}
	for i, code := range ErrorCodes() {
		if snap.Errors[i] != want[code] {
			t.Errorf("errors %s = %d, want %d", code, snap.Errors[i], want[code])
		}
	}
	if snap.ErrorTotal() != 5 {
		t.Errorf("ErrorTotal %d", snap.ErrorTotal())
	}
	if tot := snap.Total(); tot.Calls != 2 || tot.Latency.Count != 2 || tot.Rejected != 1 {
		t.Errorf("Total %+v", tot)
	}

	set.Reset()
	snap = set.Snapshot()
	if snap.Commands[2] != nil || snap.ErrorTotal() != 0 {
		t.Fatalf("after Reset: %+v errors %d", snap.Commands[2], snap.ErrorTotal())
	}
	a.Call(2, 1000)
	if c := set.Snapshot().Commands[2]; c == nil || c.Calls != 1 || c.Latency.Count != 1 {
		t.Fatalf("after Reset and one call: %+v", c)
	}
}

func TestConcurrentWritersAndReaders(t *testing.T) {
	set := NewSet(8)
	const writers, calls = 4, 20000
	var wg sync.WaitGroup
	for w := range writers {
		r := set.NewRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				r.Call(i%8, int64(w*1000+i))
				if i%100 == 0 {
					r.ErrorReply([]byte("-ERR x\r\n"))
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 50 {
			_ = set.Snapshot().Total()
		}
	}()
	wg.Wait()
	<-done
	tot := set.Snapshot().Total()
	if tot.Calls != writers*calls || tot.Latency.Count != writers*calls {
		t.Fatalf("calls %d count %d", tot.Calls, tot.Latency.Count)
	}
}

func TestCallAllocatesNothingOnceSeen(t *testing.T) {
	r := NewSet(2).NewRecorder()
	r.Call(1, 100)
	if n := testing.AllocsPerRun(1000, func() { r.Call(1, 12345) }); n != 0 {
		t.Fatalf("Call allocates %v times", n)
	}
}

func BenchmarkCall(b *testing.B) {
	r := NewSet(2).NewRecorder()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Call(1, int64(i&0xffff)*100)
	}
}

func BenchmarkNow(b *testing.B) {
	var sink int64
	for b.Loop() {
		sink += Now()
	}
	_ = sink
}
