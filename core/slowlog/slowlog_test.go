package slowlog

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func argv(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, a := range s {
		out[i] = []byte(a)
	}
	return out
}

var t0 = time.Unix(1700000000, 0)

func ids(es []Entry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func TestSlowerThan(t *testing.T) {
	for _, tc := range []struct {
		thr  time.Duration
		d    time.Duration
		want bool
	}{
		{-1, 0, false},
		{-1, time.Hour, false},
		{-5 * time.Second, time.Hour, false},
		{0, 0, true},
		{0, time.Nanosecond, true},
		{10 * time.Millisecond, 10 * time.Millisecond, true}, // Redis: duration >= threshold
		{10 * time.Millisecond, 10*time.Millisecond - 1, false},
		{10 * time.Millisecond, 11 * time.Millisecond, true},
	} {
		l := New(10, tc.thr, 0)
		if got := l.SlowerThan(tc.d); got != tc.want {
			t.Errorf("threshold %v: SlowerThan(%v) = %v, want %v", tc.thr, tc.d, got, tc.want)
		}
	}
	l := New(10, -1, 0)
	l.SetSlowerThan(time.Millisecond)
	if !l.SlowerThan(time.Millisecond) || l.SlowerThan(time.Microsecond) {
		t.Error("SetSlowerThan(1ms) not applied")
	}
	l.SetSlowerThan(-3)
	if l.SlowerThan(time.Hour) {
		t.Error("SetSlowerThan(<0) does not disable")
	}
}

func TestSlowerThanAllocs(t *testing.T) {
	l := New(10, time.Millisecond, 0)
	var sink bool
	if n := testing.AllocsPerRun(100, func() { sink = l.SlowerThan(time.Second) }); n != 0 {
		t.Errorf("SlowerThan allocates %v times", n)
	}
	_ = sink
}

func TestAddGet(t *testing.T) {
	l := New(3, 0, 0)
	if l.Len() != 0 || len(l.Get(-1)) != 0 {
		t.Fatal("new log not empty")
	}
	for i := range 5 {
		l.Add(argv("set", fmt.Sprint("k", i), "v"), time.Duration(i)*time.Microsecond, t0.Add(time.Duration(i)*time.Second), "127.0.0.1:5000", "name")
	}
	if got := l.Len(); got != 3 {
		t.Fatalf("Len = %d, want 3 (max-len)", got)
	}
	es := l.Get(-1)
	if !slices.Equal(ids(es), []int64{4, 3, 2}) {
		t.Fatalf("ids = %v, want [4 3 2] (newest first)", ids(es))
	}
	e := es[0]
	if !slices.Equal(e.Args, []string{"set", "k4", "v"}) || e.Duration != 4*time.Microsecond ||
		!e.Time.Equal(t0.Add(4*time.Second)) || e.ClientAddr != "127.0.0.1:5000" || e.ClientName != "name" {
		t.Errorf("entry = %+v", e)
	}
	if got := ids(l.Get(2)); !slices.Equal(got, []int64{4, 3}) {
		t.Errorf("Get(2) = %v", got)
	}
	if got := l.Get(0); len(got) != 0 {
		t.Errorf("Get(0) = %v", got)
	}
	if got := ids(l.Get(100)); !slices.Equal(got, []int64{4, 3, 2}) {
		t.Errorf("Get(100) = %v", got)
	}
}

func TestAddCopies(t *testing.T) {
	l := New(3, 0, 0)
	args := argv("set", "key", "value")
	l.Add(args, 0, t0, "", "")
	for _, a := range args {
		for i := range a {
			a[i] = 'X'
		}
	}
	if got := l.Get(1)[0].Args; !slices.Equal(got, []string{"set", "key", "value"}) {
		t.Errorf("entry follows the caller's buffer: %q", got)
	}
}

func TestTruncation(t *testing.T) {
	l := New(10, 0, 0)
	// 33 arguments: 31 kept, the 32nd says "... (2 more arguments)", as
	// Redis' slowlogCreateEntry.
	var args []string
	for i := range 33 {
		args = append(args, fmt.Sprint("a", i))
	}
	l.Add(argv(args...), 0, t0, "", "")
	got := l.Get(1)[0].Args
	want := append(slices.Clone(args[:31]), "... (2 more arguments)")
	if !slices.Equal(got, want) {
		t.Errorf("33 args:\n got %q\nwant %q", got, want)
	}
	// Exactly 32: nothing replaced.
	l.Add(argv(args[:32]...), 0, t0, "", "")
	if got := l.Get(1)[0].Args; !slices.Equal(got, args[:32]) {
		t.Errorf("32 args: %q", got)
	}
	// 100 arguments: "... (69 more arguments)".
	var many []string
	for i := range 100 {
		many = append(many, fmt.Sprint(i))
	}
	l.Add(argv(many...), 0, t0, "", "")
	if got := l.Get(1)[0].Args; len(got) != 32 || got[31] != "... (69 more arguments)" {
		t.Errorf("100 args: len %d, last %q", len(got), got[len(got)-1])
	}

	// Long arguments: cut to 128 bytes plus "... (N more bytes)".
	long := strings.Repeat("x", 200)
	exact := strings.Repeat("y", 128)
	l.Add(argv("set", long, exact), 0, t0, "", "")
	got = l.Get(1)[0].Args
	if got[1] != strings.Repeat("x", 128)+"... (72 more bytes)" || got[2] != exact {
		t.Errorf("long args: %q", got)
	}

	// slowlog-max-arg-len changes the cut.
	l.SetMaxArgLen(4)
	l.Add(argv("get", "abcdefgh"), 0, t0, "", "")
	if got := l.Get(1)[0].Args; !slices.Equal(got, []string{"get", "abcd... (4 more bytes)"}) {
		t.Errorf("max-arg-len 4: %q", got)
	}
	// A long argument in the position of the note is replaced, not cut.
	l.SetMaxArgLen(0)
	args = args[:33]
	args[31] = long
	l.Add(argv(args...), 0, t0, "", "")
	if got := l.Get(1)[0].Args; got[31] != "... (2 more arguments)" {
		t.Errorf("note position: %q", got[31])
	}
}

func TestRedaction(t *testing.T) {
	l := New(10, 0, 0)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		// As Redis 7.0.15 logs them.
		{[]string{"AUTH", "hunter2"}, []string{"AUTH", "(redacted)"}},
		{[]string{"auth", "default", "hunter2"}, []string{"auth", "(redacted)", "(redacted)"}},
		{[]string{"hello", "2", "auth", "default", "hunter2"}, []string{"hello", "2", "auth", "(redacted)", "(redacted)"}},
		{[]string{"HELLO", "3", "SETNAME", "auth", "AUTH", "u", "p"}, []string{"HELLO", "3", "SETNAME", "auth", "AUTH", "(redacted)", "(redacted)"}},
		{[]string{"hello", "3", "bogus", "auth", "u", "p"}, []string{"hello", "3", "bogus", "auth", "u", "p"}},
		{[]string{"hello", "3", "auth", "u"}, []string{"hello", "3", "auth", "u"}},
		{[]string{"config", "set", "requirepass", "s3cret", "maxclients", "100"}, []string{"config", "set", "requirepass", "(redacted)", "maxclients", "100"}},
		{[]string{"CONFIG", "SET", "maxclients", "100", "MasterAuth", "x"}, []string{"CONFIG", "SET", "maxclients", "100", "MasterAuth", "(redacted)"}},
		{[]string{"config", "get", "requirepass"}, []string{"config", "get", "requirepass"}},
		{[]string{"set", "auth", "requirepass"}, []string{"set", "auth", "requirepass"}},
	} {
		l.Add(argv(tc.args...), 0, t0, "", "")
		if got := l.Get(1)[0].Args; !slices.Equal(got, tc.want) {
			t.Errorf("%q logged as %q, want %q", tc.args, got, tc.want)
		}
	}
	// The registry's secrets replace Redis' list.
	l.SetSecretParams(func(p string) bool { return p == "http-token" })
	l.Add(argv("config", "set", "http-token", "t0k3n", "requirepass", "x"), 0, t0, "", "")
	if got := l.Get(1)[0].Args; !slices.Equal(got, []string{"config", "set", "http-token", "(redacted)", "requirepass", "x"}) {
		t.Errorf("with SetSecretParams: %q", got)
	}
}

func TestReset(t *testing.T) {
	l := New(5, 0, 0)
	for range 3 {
		l.Add(argv("ping"), 0, t0, "", "")
	}
	l.Reset()
	if l.Len() != 0 || len(l.Get(-1)) != 0 {
		t.Fatalf("after Reset: Len %d, Get %v", l.Len(), l.Get(-1))
	}
	l.Add(argv("ping"), 0, t0, "", "")
	if got := ids(l.Get(-1)); !slices.Equal(got, []int64{3}) {
		t.Errorf("ids after Reset = %v, want [3] (ids are never reused)", got)
	}
	for i := range l.ring.Load().slots {
		if e := l.ring.Load().slots[i].Load(); e != nil && e.ID < 3 {
			t.Errorf("slot %d still holds reset entry %d", i, e.ID)
		}
	}
}

func TestSetMaxLen(t *testing.T) {
	l := New(4, 0, 0)
	for range 6 {
		l.Add(argv("ping"), 0, t0, "", "")
	}
	l.SetMaxLen(2)
	if got := ids(l.Get(-1)); !slices.Equal(got, []int64{5, 4}) {
		t.Errorf("shrunk to 2: %v", got)
	}
	l.SetMaxLen(10)
	if got := ids(l.Get(-1)); !slices.Equal(got, []int64{5, 4}) {
		t.Errorf("grown to 10: %v", got)
	}
	for range 9 {
		l.Add(argv("ping"), 0, t0, "", "")
	}
	if got := l.Get(-1); len(got) != 10 || got[0].ID != 14 || got[9].ID != 5 {
		t.Errorf("after growing: %v", ids(got))
	}
	l.SetMaxLen(0)
	l.Add(argv("ping"), 0, t0, "", "")
	if l.Len() != 0 || l.MaxLen() != 0 {
		t.Errorf("max-len 0 keeps %d", l.Len())
	}
	l.SetMaxLen(3)
	l.Add(argv("ping"), 0, t0, "", "")
	if got := ids(l.Get(-1)); !slices.Equal(got, []int64{16}) {
		t.Errorf("ids advance while max-len is 0, as Redis: %v, want [16]", got)
	}
	l.SetMaxLen(1 << 40)
	if l.MaxLen() != MaxRing {
		t.Errorf("MaxLen = %d, want the cap %d", l.MaxLen(), MaxRing)
	}
}

// An Add that was lapped (its slot refilled by a newer entry before it
// published) must not overwrite the newer entry.
func TestPublishKeepsNewest(t *testing.T) {
	r := newRing(2)
	r.publish(&Entry{ID: 5})
	r.publish(&Entry{ID: 3}) // same slot (3%2 == 5%2), older
	if got := r.slots[1].Load().ID; got != 5 {
		t.Errorf("slot holds %d, want 5", got)
	}
}

// Concurrent writers, readers, resets and resizes: run with -race. Readers
// must always see entries newest first, with distinct ids, never more than
// max-len, each intact.
func TestConcurrent(t *testing.T) {
	l := New(64, 0, 16)
	const writers, perWriter = 8, 3000
	var wg sync.WaitGroup
	var stop atomic.Bool
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := argv("set", "key-xxxxxx", strings.Repeat("v", 40))
			for i := range perWriter {
				copy(buf[1][4:], fmt.Sprintf("%06d", i%1000000))
				l.Add(buf, time.Duration(i), t0, fmt.Sprintf("10.0.0.%d:1", w), "w")
				// The caller reuses its buffers at once.
				buf[2][0] = byte('a' + i%26)
			}
		}()
	}
	errs := make(chan string, 100)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				es := l.Get(-1)
				if len(es) > 96 { // the largest max-len the reconfigurer sets is 95
					errs <- fmt.Sprintf("Get returned %d entries", len(es))
				}
				for i, e := range es {
					if i > 0 && e.ID >= es[i-1].ID {
						errs <- fmt.Sprintf("ids not strictly decreasing: %v", ids(es))
						break
					}
					if len(e.Args) != 3 || e.Args[0] != "set" || len(e.Args[2]) != len("vvvvvvvvvvvvvvvv... (24 more bytes)") {
						errs <- fmt.Sprintf("torn entry %+v", e)
						break
					}
				}
				_ = l.Len()
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			switch i % 3 {
			case 0:
				l.Reset()
			case 1:
				l.SetMaxLen(32 + i%64)
			case 2:
				l.SetSlowerThan(0)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	// Writers finish; then stop the readers and the reconfigurer.
	done := make(chan struct{})
	go func() {
		for l.nextID.Load() < writers*perWriter {
			time.Sleep(time.Millisecond)
		}
		stop.Store(true)
		close(done)
	}()
	<-done
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := l.nextID.Load(); got != writers*perWriter {
		t.Errorf("ids handed out = %d, want %d", got, writers*perWriter)
	}
	// Quiescent: the log holds the newest entries, at most max-len.
	l.SetMaxLen(64)
	l.Reset()
	for range 100 {
		l.Add(argv("set", "k", "v"), 0, t0, "", "")
	}
	if es := l.Get(-1); len(es) != 64 || es[0].ID != writers*perWriter+99 {
		t.Errorf("after the storm: %d entries, newest %d", len(es), es[0].ID)
	}
}

func BenchmarkAdd(b *testing.B) {
	l := New(128, 0, 0)
	args := argv("set", "key:000001", strings.Repeat("v", 64))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Add(args, time.Millisecond, t0, "127.0.0.1:50000", "")
		}
	})
}

func BenchmarkSlowerThan(b *testing.B) {
	l := New(128, 10*time.Millisecond, 0)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if l.SlowerThan(time.Microsecond) {
				b.Fatal("logged")
			}
		}
	})
}
