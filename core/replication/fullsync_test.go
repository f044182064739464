package replication

import (
	"bufio"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingSource is fakeSource counting its snapshots.
type countingSource struct {
	fakeSource
	n atomic.Int32
}

func (s *countingSource) WriteReplicaSnapshot(w io.Writer, feed FeedSink, at func()) error {
	s.n.Add(1)
	return s.fakeSource.WriteReplicaSnapshot(w, feed, at)
}

// Two replicas arriving within repl-diskless-sync-delay share one
// snapshot: the same +FULLRESYNC offset, the same payload, one EOF mark;
// repl-diskless-sync-max-replicas 2 starts it when the second arrives.
func TestDisklessSyncShared(t *testing.T) {
	src := &countingSource{fakeSource: fakeSource{"REDIS0009-payload"}}
	r := New(Config{Target: &recordingTarget{}, Source: src, Dir: t.TempDir(),
		DisklessSync: func() bool { return true }, BacklogSize: 64})
	r.SetDisklessSyncDelay(time.Hour, 2)
	id := r.IDs().ID
	info := ReplicaInfo{Addr: "x", IP: "127.0.0.1", ListeningPort: 7, CapaEOF: true, CapaPSync2: true}
	br1, _ := attach(r, info, "?", -1)
	br2, _ := attach(r, info, "?", -1)
	// net.Pipe has no buffer: the snapshot's writer goes replica by
	// replica, so both are read at once.
	type got struct{ line, mark, payload string }
	gots := make(chan got, 2)
	for _, br := range []*bufio.Reader{br1, br2} {
		go func() {
			line, _ := br.ReadString('\n')
			hdr, _ := br.ReadString('\n')
			mark := strings.TrimSuffix(strings.TrimPrefix(hdr, "$EOF:"), "\r\n")
			b := make([]byte, 17+40)
			_, _ = io.ReadFull(br, b)
			gots <- got{line, mark, string(b)}
		}()
	}
	var marks []string
	for range 2 {
		g := <-gots
		if g.line != "+FULLRESYNC "+id+" 0\r\n" || g.payload != "REDIS0009-payload"+g.mark {
			t.Fatalf("a replica got %q, then %q", g.line, g.payload)
		}
		marks = append(marks, g.mark)
	}
	if n := src.n.Load(); n != 1 || r.SyncSnapshots() != 1 || marks[0] != marks[1] {
		t.Errorf("snapshots: source %d, SyncSnapshots %d, marks %q; want one", n, r.SyncSnapshots(), marks)
	}
}

// The cron frees the backlog of a master without replicas for more than
// repl-backlog-ttl seconds, with a new ID and none secondary, keeping
// master_repl_offset; 0 never frees it.
func TestBacklogTTL(t *testing.T) {
	r := newMaster(t, false)
	r.feed.mu.Lock()
	r.feed.backlog = NewBacklog(64, 100)
	r.feed.backlog.Feed([]byte("0123456789"))
	r.feed.mu.Unlock()
	old := r.IDs().ID
	now := time.Now()
	r.SetBacklogTTL(0)
	r.cronTick(1, now)
	r.cronTick(2, now.Add(time.Hour))
	if r.masterOffset() != 110 || r.feed.backlog == nil {
		t.Fatalf("repl-backlog-ttl 0 freed the backlog")
	}
	r.SetBacklogTTL(2)
	r.cronTick(3, now.Add(2*time.Second))
	if r.feed.backlog == nil {
		t.Fatalf("freed after 2 s without replicas, want more than 2 s (Redis: idle > ttl)")
	}
	r.feed.mu.Lock()
	r.feed.noReplicasSince = now
	r.feed.mu.Unlock()
	r.cronTick(4, now.Add(3*time.Second))
	ids := r.IDs()
	if r.feed.backlog != nil || ids.ID == old || ids.ID2 != zeroID || ids.Offset2 != -1 || r.masterOffset() != 110 {
		t.Errorf("after the TTL: backlog %v, IDs %+v (old ID %s), offset %d", r.feed.backlog != nil, ids, old, r.masterOffset())
	}
}
