package shard

import (
	"testing"
	"time"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// TestPacerKeepsDuty: while commands are served, the time the snapshot spent
// (steps, drained batches, writes: whatever pause is told) takes at most
// snapshotDuty of the time elapsed.
func TestPacerKeepsDuty(t *testing.T) {
	duty := snapshotDuty
	snapshotDuty = 0.25
	defer func() { snapshotDuty = duty }()
	var p pacer
	start := time.Now()
	const spent = 2 * time.Millisecond
	for i := range 5 {
		time.Sleep(spent) // the work being paced
		p.pause(spent, int64(i))
	}
	// Five pauses accounted 10 ms: the pacer may stop sleeping up to a
	// millisecond short of 40 ms (it sleeps only a millisecond or more).
	if took, want := time.Since(start), time.Duration(float64(5*spent)/snapshotDuty)-time.Millisecond; took < want {
		t.Fatalf("10 ms of snapshot work over %v; want at least %v at a duty of %.2f", took, want, snapshotDuty)
	}
}

// TestPacerIdle: when no command has run for snapshotIdleAfter the pacer
// does not sleep, however far ahead of its duty the snapshot is, and it
// paces again once commands run.
func TestPacerIdle(t *testing.T) {
	var p pacer
	p.pause(0, 7) // the first pause assumes clients
	p.servedAt = time.Now().Add(-2 * snapshotIdleAfter)
	start := time.Now()
	p.pause(time.Second, 7) // paced, this would sleep 1s/snapshotDuty
	if took := time.Since(start); took >= time.Second {
		t.Fatalf("an idle server's snapshot slept %v", took)
	}
	if !p.start.IsZero() || p.busy != 0 {
		t.Fatalf("idle: pacing state start %v busy %v; want none", p.start, p.busy)
	}
	start = time.Now()
	p.pause(10*time.Millisecond, 8) // a command ran: paced again
	if took, want := time.Since(start), time.Duration(float64(10*time.Millisecond)/snapshotDuty)-11*time.Millisecond; took < want {
		t.Fatalf("after a command the snapshot slept %v; want at least %v", took, want)
	}
}

// TestSnapshotWriteNoAllocs: while a snapshot runs, a write command (which
// first saves its keys' point-in-time entries) allocates nothing once its
// key is written: the snapshot must not start collections under load.
func TestSnapshotWriteNoAllocs(t *testing.T) {
	e := newExecer(t)
	set := e.cmd("set")
	for i := range 100 {
		e.run(set, []byte("set"), []byte("key:"+string(rune('a'+i%26))+string(rune('a'+i/26))), []byte("value"))
	}
	results := make(chan keyspace.StepResult, e.rt.NumShards())
	m, err := e.rt.markSnapshot(results, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.rt.abortSnapshot(m.snaps)
	args := [][]byte{[]byte("set"), []byte("key:aa"), []byte("other value")}
	e.run(set, args...) // writes key:aa's entry early, once
	if n := testing.AllocsPerRun(200, func() { e.run(set, args...) }); n != 0 {
		t.Errorf("SET during a snapshot: %.1f allocations per call, want 0", n)
	}
}
