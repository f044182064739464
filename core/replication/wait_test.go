package replication

import (
	"testing"
	"time"
)

// recOwner records how a WAIT ended.
type recOwner struct {
	reply   chan string
	aborted chan string
}

func newRecOwner() *recOwner {
	return &recOwner{reply: make(chan string, 1), aborted: make(chan string, 1)}
}

func (o *recOwner) Unblocked(reply []byte, _ bool) { o.reply <- string(reply) }
func (o *recOwner) Aborted(reply []byte)           { o.aborted <- string(reply) }

// A WAIT on a master that never had a replica blocks (Redis), is counted,
// and ends by its timeout, CLIENT UNBLOCK (count or error), a close, or a
// demotion.
func TestWaitBlocksWithoutBacklog(t *testing.T) {
	r := newMaster(t, false)
	if w, n := r.StartWait(0, 0, newRecOwner()); w != nil || n != 0 {
		t.Fatalf("WAIT 0 0 blocked (%v, %d)", w, n)
	}
	if w, n := r.StartWait(1, -1, newRecOwner()); w != nil || n != 0 {
		t.Fatalf("WAIT inside EXEC blocked (%v, %d)", w, n)
	}

	o := newRecOwner()
	start := time.Now()
	if w, _ := r.StartWait(1, 50*time.Millisecond, o); w == nil {
		t.Fatal("WAIT 1 50 did not block")
	}
	if got := <-o.reply; got != ":0\r\n" || time.Since(start) < 50*time.Millisecond {
		t.Errorf("WAIT 1 50 = %q after %v", got, time.Since(start))
	}

	o = newRecOwner()
	w, _ := r.StartWait(1, 0, o)
	if r.BlockedWaits() != 1 {
		t.Errorf("BlockedWaits = %d, want 1", r.BlockedWaits())
	}
	if !w.Unblock(nil) || <-o.reply != ":0\r\n" || w.Unblock(nil) {
		t.Errorf("CLIENT UNBLOCK TIMEOUT: want the count once")
	}
	o = newRecOwner()
	w, _ = r.StartWait(1, 0, o)
	if !w.Unblock([]byte("-UNBLOCKED x\r\n")) || <-o.reply != "-UNBLOCKED x\r\n" {
		t.Errorf("CLIENT UNBLOCK ERROR: want the error")
	}
	w, _ = r.StartWait(1, 0, newRecOwner())
	w.Cancel()
	if r.BlockedWaits() != 0 || w.Unblock(nil) {
		t.Errorf("after Cancel: BlockedWaits %d, the wait still ends", r.BlockedWaits())
	}
	o = newRecOwner()
	_, _ = r.StartWait(1, time.Hour, o)
	r.dropReplicas()
	if got := <-o.aborted; got != errUnblockedRoleChange || r.BlockedWaits() != 0 {
		t.Errorf("demotion: %q, BlockedWaits %d", got, r.BlockedWaits())
	}
}
