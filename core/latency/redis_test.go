package latency

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// TestMatchesRedis records "command" latency events in a real redis-server
// (slow EVALs over three seconds), replays its samples into a Monitor with
// the clock set to Redis' TIME, and compares LATENCY GRAPH and LATENCY
// DOCTOR byte for byte.
func TestMatchesRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 3 s")
	}
	addr := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	if err := rdb.ConfigSet(ctx, "latency-monitor-threshold", "1").Err(); err != nil {
		t.Fatal(err)
	}
	const script = "local i=0 while i<tonumber(ARGV[1]) do i=i+1 end return i"
	for k := range 3 {
		// Start of the next second, so each round lands in its own second.
		now := time.Now()
		time.Sleep(now.Truncate(time.Second).Add(time.Second + 50*time.Millisecond).Sub(now))
		for _, n := range []int{300000 * (k + 1), 200000} {
			if err := rdb.Eval(ctx, script, nil, n).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}

	for attempt := 0; ; attempt++ {
		var before, after *redis.TimeCmd
		var hist *redis.Cmd
		var graph, doctor *redis.StringCmd
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			before = p.Time(ctx)
			hist = p.Do(ctx, "latency", "history", "command")
			graph = redis.NewStringCmd(ctx, "latency", "graph", "command")
			doctor = redis.NewStringCmd(ctx, "latency", "doctor")
			if err := p.Process(ctx, graph); err != nil {
				return err
			}
			if err := p.Process(ctx, doctor); err != nil {
				return err
			}
			after = p.Time(ctx)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if before.Val().Unix() != after.Val().Unix() {
			if attempt == 3 {
				t.Fatal("Redis' clock keeps crossing a second during the pipeline")
			}
			continue
		}
		samples, err := hist.Slice()
		if err != nil || len(samples) == 0 {
			t.Fatalf("LATENCY HISTORY command: %v %v", samples, err)
		}

		m, c := newTestMonitor(time.Millisecond)
		m.SetEnv(func() Env { return Env{SlowlogSlowerThan: 10 * time.Millisecond, Hz: 10} })
		for _, s := range samples {
			pair := s.([]any)
			c.set(time.Unix(pair[0].(int64), 0))
			m.AddIfNeeded("command", time.Duration(pair[1].(int64))*time.Millisecond)
		}
		c.set(before.Val())
		if g, _ := m.Graph("command"); g != graph.Val() {
			t.Errorf("LATENCY GRAPH (samples %v):\n got %q\nwant %q", samples, g, graph.Val())
		}
		if strings.Contains(doctor.Val(), "anonymous huge pages") {
			m.anonHugePages = func() int64 { return 1 } // Redis' process has THP pages: so would ours
		}
		if d := m.Doctor(); d != doctor.Val() {
			t.Errorf("LATENCY DOCTOR:\n got %q\nwant %q", d, doctor.Val())
		}
		t.Logf("compared %d samples: %s", len(samples), strconv.Quote(graph.Val()[:60]))
		return
	}
}
