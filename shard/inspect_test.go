package shard

import (
	"strconv"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
)

// TestInspect: every shard's owner answers with its key counts; a shard
// whose token is held is reported late within the deadline while the others
// answer; its answer, when it finally runs, touches nothing the caller kept.
func TestInspect(t *testing.T) {
	for _, st := range []Strategy{RunToCompletion, Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			rt, table := newTestRuntime(t, 4, st)
			p := newProducer(rt, table)
			want := make([]int64, rt.NumShards())
			wantExp := make([]int64, rt.NumShards())
			for i := range 200 {
				k := "k" + strconv.Itoa(i)
				if i%4 == 0 {
					p.do("SET", k, "v", "EX", "100")
					wantExp[rt.ShardOf([]byte(k))]++
				} else {
					p.do("SET", k, "v")
				}
				want[rt.ShardOf([]byte(k))]++
			}
			rep := rt.Inspect(time.Second)
			for i, r := range rep {
				if r.ID != i || r.Late {
					t.Fatalf("shard %d: %+v", i, r)
				}
				if r.Keys[0] != want[i] || r.TotalKeys() != want[i] || r.Expires[0] != wantExp[i] || r.TotalExpires() != wantExp[i] {
					t.Errorf("shard %d: keys %d expires %d; want %d %d", i, r.Keys[0], r.Expires[0], want[i], wantExp[i])
				}
				if r.MemoryUsed <= 0 {
					t.Errorf("shard %d: memory %d with keys", i, r.MemoryUsed)
				}
			}

			const held = 2
			release := rt.HoldShard(held)
			defer release()
			const deadline = 50 * time.Millisecond
			start := time.Now()
			rep = rt.Inspect(deadline)
			took := time.Since(start)
			if took < deadline || took > deadline+time.Second {
				t.Errorf("Inspect with a held shard took %v; want about %v", took, deadline)
			}
			for i, r := range rep {
				if (i == held) != r.Late {
					t.Errorf("shard %d: late = %v with shard %d held", i, r.Late, held)
				}
				if r.Late && (r.TotalKeys() != 0 || r.MemoryUsed != 0 || r.QueueDepth < 1 || r.Answer != deadline) {
					t.Errorf("late shard %d: %+v; want no owner data, the queued control message counted", i, r)
				}
				if !r.Late && r.TotalKeys() != want[i] {
					t.Errorf("shard %d: keys %d; want %d", i, r.TotalKeys(), want[i])
				}
			}
			kept := rep[held]
			release() // the late control message runs now, into its own channel
			rep2 := rt.Inspect(time.Second)
			for i, r := range rep2 {
				if r.Late {
					t.Errorf("shard %d late after release", i)
				}
			}
			if rep[held] != kept {
				t.Errorf("the late answer changed the caller's report: %+v -> %+v", kept, rep[held])
			}
		})
	}
}

// TestInspectFullQueue: a held shard whose queue is full is reported late
// too; Inspect does not wait for room beyond the deadline.
func TestInspectFullQueue(t *testing.T) {
	for _, st := range []Strategy{RunToCompletion, Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			// QueueCap 2: the smallest queue (the ring needs two cells).
			rt, err := New(Config{Shards: 2, QueueCap: 2, Strategy: st}, command.New())
			if err != nil {
				t.Fatal(err)
			}
			rt.Start()
			defer rt.Close()
			release := rt.HoldShard(0)
			defer release()
			for i := 1; i <= 2; i++ {
				if rep := rt.Inspect(20 * time.Millisecond); !rep[0].Late || rep[1].Late || rep[0].QueueDepth != i {
					t.Fatalf("inspect %d: %+v", i, rep)
				}
			}
			// Both control messages still fill shard 0's queue: no room.
			start := time.Now()
			rep := rt.Inspect(20 * time.Millisecond)
			if !rep[0].Late || rep[1].Late || rep[0].QueueDepth != 2 {
				t.Fatalf("full queue: %+v", rep)
			}
			if took := time.Since(start); took > time.Second {
				t.Fatalf("Inspect waited %v for a full queue", took)
			}
			release()
			if rep := rt.Inspect(time.Second); rep[0].Late || rep[1].Late {
				t.Fatalf("after release: %+v", rep)
			}
		})
	}
}
