package keyspace

import (
	"math"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/values"
)

// Blocking commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX, BZMPOP, XREAD BLOCK, XREADGROUP BLOCK) are written as one
// handler that serves what it can and otherwise blocks:
//
//	func cmdBLPop(c *Ctx) {
//		... parse; deadline, ok := c.ParseTimeout(arg, true) ...
//		for _, key := range keys {
//			if !c.servable(key) { continue }
//			... if key has data: pop, reply, return ...
//		}
//		c.Block(keys, deadline, TimeoutNullArray)
//	}
//
// When a key it waits on gets data, the runtime runs the same handler again
// for the waiting client on the shard that owns that key, with servable true
// for that key only; a run that replies nothing leaves the client waiting.
//
// The runs that follow see the arguments as they were when c.block was
// called: the runtime parks a copy of c.Args then. An argument that means
// something relative to the first run must be pinned before blocking by
// replacing it in c.Args (with a slice the handler may allocate): XREAD
// rewrites each "$" ID to that stream's last ID, so a later run reads only
// what came after the moment the command blocked (Redis rewrites its argv
// the same way).

// TimeoutReply is what a blocked client gets when its timeout passes (and what
// a blocking command replies at once when it cannot block, inside MULTI).
type TimeoutReply uint8

const (
	TimeoutNullArray TimeoutReply = iota // *-1 (BLPOP, BZPOPMIN, BLMPOP, XREAD, ...)
	TimeoutNullBulk                      // $-1 (BLMOVE, BRPOPLPUSH)
)

// ParseTimeout reads a blocking command's timeout as Redis'
// getTimeoutFromObjectOrReply: seconds (fractions allowed) when seconds is
// true, else whole milliseconds (XREAD BLOCK). It returns the deadline in unix
// milliseconds, 0 for "wait forever", or replies with Redis' error.
func (c *Ctx) ParseTimeout(arg []byte, seconds bool) (deadline int64, ok bool) {
	var ms int64
	if seconds {
		f, err := strconv.ParseFloat(string(arg), 64)
		if err != nil && !isRangeErr(err) || len(arg) == 0 || math.IsNaN(f) || values.IsCSpace(arg[0]) {
			c.Err("ERR timeout is not a float or out of range")
			return 0, false
		}
		f *= 1000
		if f > math.MaxInt64 || math.IsInf(f, 1) {
			// Redis 7.0 casts to long long (LLONG_MIN on x86): "negative".
			c.Err("ERR timeout is negative")
			return 0, false
		}
		if f < 0 {
			c.Err("ERR timeout is negative")
			return 0, false
		}
		ms = int64(math.Ceil(f))
	} else {
		n, ok := resp.ParseInt(arg)
		if !ok {
			c.Err("ERR timeout is not an integer or out of range")
			return 0, false
		}
		if n < 0 {
			c.Err("ERR timeout is negative")
			return 0, false
		}
		ms = n
	}
	if ms == 0 {
		return 0, true
	}
	if ms > math.MaxInt64-c.Now {
		c.Err("ERR timeout is out of range")
		return 0, false
	}
	return c.Now + ms, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// Servable reports whether a blocking handler may look at key now: always,
// except while the runtime serves a woken client, when only the key that got
// data may be touched (the others may live on shards it does not hold).
func (c *Ctx) Servable(key []byte) bool {
	return c.ready == nil || string(key) == string(c.ready)
}

// Block parks the client on keys until one of them gets data or deadline
// (unix ms, 0 = never) passes, when it is sent reply. Where a client cannot
// block (inside MULTI) it gets reply at once; while the runtime serves a woken
// client, block does nothing (the client keeps waiting).
func (c *Ctx) Block(keys [][]byte, deadline int64, reply TimeoutReply) {
	if c.ready != nil {
		return
	}
	if c.Blocker == nil { // inside MULTI, or a producer that cannot park
		c.timeoutReply(reply)
		return
	}
	c.park(keys, deadline, reply)
}

func (c *Ctx) timeoutReply(r TimeoutReply) { c.Out = appendTimeoutReply(c.Out, r, c.RESP3) }

func appendTimeoutReply(dst []byte, r TimeoutReply, resp3 bool) []byte {
	if r == TimeoutNullBulk {
		return resp.AppendNull(dst, resp3)
	}
	return resp.AppendNullArray(dst, resp3)
}

// SignalReady tells blocked clients that key may now serve them (XADD, which
// appends to a stream that already exists). Creating a list, sorted set or
// stream key signals by itself (DB.insert).
func (d *DB) SignalReady(key []byte) {
	if d.blocked != nil {
		d.markReady(string(key))
	}
}
