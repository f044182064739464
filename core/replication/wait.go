package replication

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/svcdb/svcdb/core/resp"
)

// WAIT numreplicas timeout (Redis' waitCommand and the clients_waiting_acks
// list): a client blocks until n replicas acknowledged the stream up to
// the offset at the call, its timeout passes (0: never), CLIENT UNBLOCK
// ends it, or the node becomes a replica. Redis blocks even on a master
// that never had a replica (and so WAIT 1 0 there waits for one to
// attach), and counts the client in INFO's blocked_clients.
//
// A blocked WAIT is an AckWait in the feed's list: each REPLCONF ACK
// serves the waits it satisfies (Redis does so once per event loop turn,
// in beforeSleep), a timer ends it with the count at its timeout, and its
// owner (the client's connection) gets the reply through Unblocked, or
// through Aborted when the node became a replica (the connection is then
// closed, as Redis' disconnectAllBlockedClients). Nothing of it runs on
// an event loop but the owner's reply.

// WaitOwner is the client a WAIT blocks: netloop's connection, the same
// shape as the keyspace's blocked clients (keyspace.Unblocker, Aborter).
// Both are called once, from any goroutine, and must not block.
type WaitOwner interface {
	Unblocked(reply []byte, retry bool)
	Aborted(reply []byte)
}

// errUnblockedRoleChange ends a WAIT when REPLICAOF host port runs: Redis
// 7.0's disconnectAllBlockedClients, the same reply netloop gives the
// clients blocked on keys.
const errUnblockedRoleChange = "-UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)\r\n"

// getAckCmd asks every replica for its offset (REPLCONF GETACK *); it is
// part of the stream, as in Redis.
var getAckCmd = []byte("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n")

// AckWait is one client blocked in WAIT.
type AckWait struct {
	r      *Replica
	owner  WaitOwner
	n      int
	target int64 // the stream's offset at the call
	timer  *time.Timer
	done   bool // guarded by masterFeed.mu
}

// StartWait runs WAIT n timeout for owner (waitCommand): it returns the
// count of replicas that acknowledged every byte of the stream fed before
// the call (which holds the caller's writes: svcdb waits for the whole
// stream's offset where Redis uses the client's last write's) when that
// is n already or timeout is negative (inside EXEC: no blocking), with a
// nil AckWait. Otherwise the client is blocked (timeout 0: no limit): the
// returned AckWait ends with owner.Unblocked (the count, or CLIENT
// UNBLOCK's reply) or owner.Aborted (the node became a replica).
func (r *Replica) StartWait(n int, timeout time.Duration, owner WaitOwner) (*AckWait, int) {
	f := &r.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if r.IsReplica() { // REPLICAOF ran since netloop checked: the backlog is our master's stream now
		return nil, WaitUnblocked
	}
	target := r.offset.Load()
	if f.backlog != nil {
		target = f.backlog.Offset()
	}
	acked := f.ackedLocked(target)
	if acked >= n || timeout < 0 {
		return nil, acked
	}
	if f.backlog != nil && len(f.replicas) > 0 { // replicationRequestAckFromSlaves
		f.backlog.Feed(getAckCmd)
		r.fanOut(getAckCmd)
	}
	w := &AckWait{r: r, owner: owner, n: n, target: target}
	f.waits = append(f.waits, w)
	if timeout > 0 {
		// Set w.timer before the timer can fire: Reset orders this write
		// before fire (which reads w.timer) for the race detector too.
		w.timer = time.AfterFunc(time.Duration(1<<63-1), w.fire)
		w.timer.Reset(timeout)
	}
	return w, 0
}

// BlockedWaits is how many clients are blocked in WAIT (part of INFO's
// blocked_clients, as Redis counts them).
func (r *Replica) BlockedWaits() int64 {
	r.feed.mu.Lock()
	defer r.feed.mu.Unlock()
	return int64(len(r.feed.waits))
}

// Unblock ends the wait as CLIENT UNBLOCK does: with the timeout's reply
// (the count so far) when errReply is nil, else with errReply. It reports
// false when the wait had ended already.
func (w *AckWait) Unblock(errReply []byte) bool {
	f := &w.r.feed
	f.mu.Lock()
	if !w.endLocked() {
		f.mu.Unlock()
		return false
	}
	reply := errReply
	if reply == nil {
		reply = resp.AppendInt(nil, int64(f.ackedLocked(w.target)))
	}
	f.mu.Unlock()
	w.owner.Unblocked(reply, false)
	return true
}

// Cancel ends the wait without a reply (the client closed).
func (w *AckWait) Cancel() {
	f := &w.r.feed
	f.mu.Lock()
	w.endLocked()
	f.mu.Unlock()
}

// fire is the timeout: the reply is the count so far.
func (w *AckWait) fire() { w.Unblock(nil) }

// endLocked takes w out of the feed's list; false when it was out
// already. REQUIRES: masterFeed.mu.
func (w *AckWait) endLocked() bool {
	if w.done {
		return false
	}
	w.done = true
	if w.timer != nil {
		w.timer.Stop()
	}
	f := &w.r.feed
	if i := slices.Index(f.waits, w); i >= 0 {
		f.waits = slices.Delete(f.waits, i, i+1)
	}
	return true
}

// servedWait is a wait an ACK satisfied and its reply, delivered once the
// feed's mutex is released.
type servedWait struct {
	w     *AckWait
	reply []byte
}

// serveWaitsLocked ends the waits whose count is reached
// (processClientsWaitingReplicas). REQUIRES: masterFeed.mu.
func (r *Replica) serveWaitsLocked() []servedWait {
	f := &r.feed
	var out []servedWait
	for i := 0; i < len(f.waits); {
		w := f.waits[i]
		if acked := f.ackedLocked(w.target); acked >= w.n {
			w.endLocked() // removes f.waits[i]
			out = append(out, servedWait{w, resp.AppendInt(nil, int64(acked))})
			continue
		}
		i++
	}
	return out
}

// takeWaitsLocked ends every wait and returns them (the node becomes a
// replica). REQUIRES: masterFeed.mu.
func (f *masterFeed) takeWaitsLocked() []*AckWait {
	out := slices.Clone(f.waits)
	for _, w := range out {
		w.endLocked()
	}
	return out
}

// Wait is StartWait for a caller that can block its goroutine (tests): it
// returns the count, or WaitUnblocked when the node became a replica.
func (r *Replica) Wait(n int, timeout time.Duration) int {
	o := &chanOwner{ch: make(chan []byte, 1)}
	w, acked := r.StartWait(n, timeout, o)
	if w == nil {
		return acked
	}
	reply := <-o.ch
	if o.aborted.Load() {
		return WaitUnblocked
	}
	v, _ := resp.ParseInt(reply[1 : len(reply)-2])
	return int(v)
}

// WaitUnblocked is what Wait returns when the node became a replica while
// it waited, and StartWait's count when it already had (the caller answers
// UnblockedRoleChange).
const WaitUnblocked = -1

// UnblockedRoleChange is the reply of a WAIT that REPLICAOF ended.
var UnblockedRoleChange = []byte(errUnblockedRoleChange)

// chanOwner is Wait's owner: the reply on a channel.
type chanOwner struct {
	ch      chan []byte
	aborted atomic.Bool
}

func (o *chanOwner) Unblocked(reply []byte, _ bool) { o.ch <- reply }
func (o *chanOwner) Aborted(reply []byte)           { o.aborted.Store(true); o.ch <- reply }
