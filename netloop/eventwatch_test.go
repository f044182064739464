package netloop_test

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/svcdb/svcdb/netloop"
)

// A keyspace event watch gets the matching notifications up to its cap
// (the rest only counted, the writers never held), at most four run at
// once, and one ends at its deadline.
func TestWatchKeyspaceBounded(t *testing.T) {
	ts := startServer(t)
	c := dialRaw(t, ts.Addr)
	c.do("CONFIG", "SET", "notify-keyspace-events", "KEA")
	type result struct {
		events  []netloop.KeyspaceEvent
		dropped int64
	}
	got := make(chan result, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 { // three watches that see nothing hold their slots
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, _ = ts.Srv.WatchKeyspace("__keyevent@0__:nosuch", 30*time.Second, 10, stop)
		}()
	}
	go func() {
		ev, dropped, err := ts.Srv.WatchKeyspace("__keyspace@0__:w:*", 30*time.Second, 5, nil)
		if err != nil {
			t.Error(err)
		}
		got <- result{ev, dropped}
	}()
	time.Sleep(100 * time.Millisecond) // the watches register
	if _, _, err := ts.Srv.WatchKeyspace("*", time.Second, 1, nil); !errors.Is(err, netloop.ErrTooManyWatches) {
		t.Errorf("a fifth watch: %v, want ErrTooManyWatches", err)
	}
	for i := range 50 {
		if r := c.do("SET", "w:"+strconv.Itoa(i), "v"); string(r.Str) != "OK" {
			t.Fatalf("SET: %v", r)
		}
	}
	r := <-got
	if len(r.events) != 5 || r.events[0].Channel != "__keyspace@0__:w:0" || r.events[0].Message != "set" {
		t.Errorf("events %+v", r.events)
	}
	close(stop)
	wg.Wait()
	start := time.Now()
	ev, _, err := ts.Srv.WatchKeyspace("__keyevent@0__:nosuch", time.Second, 10, nil)
	if err != nil || len(ev) != 0 || time.Since(start) < time.Second {
		t.Errorf("an idle watch: %v %v after %v", ev, err, time.Since(start))
	}
}
