package shard

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/aof"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// What this file proves: every change a command makes reaches the
// append-only log as commands that redo it exactly. A randomized workload
// runs against a runtime whose log is kept in memory; the log is then
// replayed into a fresh runtime and both datasets are compared key by key
// (type, value, absolute expiry, streams with their groups, PELs, delivery
// times and counts). Targeted tests compare the bytes logged for each
// rewritten command with what a real redis-server 7.0 writes to its own AOF.

// memLog is an AppendLog that keeps the log in memory.
type memLog struct {
	mu  sync.Mutex
	buf []byte
}

func (l *memLog) Append(p []byte) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	return int64(len(l.buf))
}

func (l *memLog) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.buf)
}

func (l *memLog) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buf)
}

// replayLimits make the encodings convert and stream nodes fill within a
// short workload (approximate trimming only drops whole nodes).
var replayLimits = keyspace.EncodingLimits{
	HashMaxListpackEntries: 8,
	HashMaxListpackValue:   16,
	SetMaxIntsetEntries:    8,
	ZSetMaxListpackEntries: 8,
	ZSetMaxListpackValue:   16,
	ListMaxListpackSize:    4,
	StreamNodeMaxEntries:   4,
}

// newRuntimeForLog builds a runtime with the test's limits; started, its
// active expiry runs every 5ms.
func newRuntimeForLog(t testing.TB, table *command.Table, start bool) *Runtime {
	t.Helper()
	rt, err := New(Config{Shards: 4, ActiveExpireEvery: 5 * time.Millisecond, OnPanic: func(cmd string, r any, stack []byte) {
		t.Errorf("handler %s panicked: %v\n%s", cmd, r, stack)
	}}, table)
	if err != nil {
		t.Fatal(err)
	}
	rt.SetEncodingLimits(replayLimits)
	if start {
		rt.Start()
	}
	return rt
}

// logExec runs one command in database db with the clock at now, the way
// netloop does (Cmd is the top-level command, subcommands included), waiting
// for the shard when another goroutine holds it.
func logExec(rt *Runtime, table *command.Table, c *keyspace.Ctx, db int, now int64, args [][]byte) []byte {
	c.Bind(rt.env)
	c.DB, c.Now = db, now
	c.Cmd, c.Args, c.Out = table.Lookup(args[0]), args, c.Out[:0]
	if c.Cmd == nil {
		panic("unknown command " + string(args[0]))
	}
	if !rt.execHere(c) {
		panic("not a shard command: " + string(args[0]))
	}
	return c.Out
}

func logArgv(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

func logReply(t testing.TB, out []byte) resp.Value {
	t.Helper()
	v, n, err := resp.ReadReply(out)
	if err != nil || n != len(out) {
		t.Fatalf("bad reply %q: %v", out, err)
	}
	return v
}

// logCommands parses a log with the AOF loader's reader.
func logCommands(t testing.TB, b []byte) [][][]byte {
	t.Helper()
	r := aof.NewCommandReader(bytes.NewReader(b), int64(len(b)))
	var cmds [][][]byte
	for {
		args, err := r.Next()
		if err == io.EOF {
			return cmds
		}
		if err != nil {
			t.Fatalf("the log does not parse: %v", err)
		}
		q := make([][]byte, len(args))
		for i, a := range args {
			q[i] = slices.Clone(a)
		}
		cmds = append(cmds, q)
	}
}

// replayInto replays a log into rt as the loader does. When a command
// fails, the commands before it are shown, and with AOF_DEBUG_KEY=<key> in
// the environment every command naming that key, with its database.
func replayInto(t testing.TB, rt *Runtime, log []byte) {
	t.Helper()
	r := rt.NewReplayer()
	cmds := logCommands(t, log)
	for i, args := range cmds {
		if err := r.Apply(args); err != nil {
			var before strings.Builder
			for _, q := range cmds[max(i-30, 0):i] {
				fmt.Fprintf(&before, "\n  %q", q)
			}
			if dk := os.Getenv("AOF_DEBUG_KEY"); dk != "" {
				db := 0
				for j, q := range cmds[:i+1] {
					if strings.EqualFold(string(q[0]), "select") {
						db, _ = strconv.Atoi(string(q[1]))
					}
					for _, a := range q {
						if string(a) == dk {
							t.Logf("%d db%d %q", j, db, q)
							break
						}
					}
				}
			}
			t.Fatalf("replaying command %d %q: %v; the commands before it:%s", i, args, err, before.String())
		}
	}
	r.Finish()
}

// ---- the dataset as seen through commands ------------------------------------

// dumpDataset describes every live key of every database at time now: type,
// absolute expiry and value, streams with XINFO STREAM FULL (groups, PELs
// with delivery times and counts, consumers and their pending entries). A
// consumer's seen-time is left out: neither Redis nor svcdb logs it.
func dumpDataset(t testing.TB, rt *Runtime, table *command.Table, now int64) []string {
	t.Helper()
	var c keyspace.Ctx
	do := func(db int, args ...string) resp.Value {
		return logReply(t, logExec(rt, table, &c, db, now, logArgv(args...)))
	}
	var lines []string
	for db := range keyspace.NumDatabases {
		keys := do(db, "KEYS", "*")
		var names []string
		for _, k := range keys.Elems {
			names = append(names, string(k.Str))
		}
		slices.Sort(names)
		for _, k := range names {
			typ := string(do(db, "TYPE", k).Str)
			at := do(db, "PEXPIRETIME", k).Int
			var val resp.Value
			switch typ {
			case "string":
				val = do(db, "GET", k)
			case "list":
				val = do(db, "LRANGE", k, "0", "-1")
			case "set":
				val = do(db, "SMEMBERS", k)
				slices.SortFunc(val.Elems, func(a, b resp.Value) int { return bytes.Compare(a.Str, b.Str) })
			case "zset":
				val = do(db, "ZRANGE", k, "0", "-1", "WITHSCORES")
			case "hash":
				val = do(db, "HGETALL", k)
				logSortPairs(val.Elems)
			case "stream":
				val = do(db, "XINFO", "STREAM", k, "FULL", "COUNT", "0")
				logBlankSeenTimes(&val)
			}
			lines = append(lines, fmt.Sprintf("db%d %q %s expire=%d %s", db, k, typ, at, val.String()))
		}
	}
	return lines
}

func logSortPairs(e []resp.Value) {
	type pair struct{ k, v resp.Value }
	ps := make([]pair, len(e)/2)
	for i := range ps {
		ps[i] = pair{e[2*i], e[2*i+1]}
	}
	slices.SortFunc(ps, func(a, b pair) int { return bytes.Compare(a.k.Str, b.k.Str) })
	for i, p := range ps {
		e[2*i], e[2*i+1] = p.k, p.v
	}
}

func logBlankSeenTimes(v *resp.Value) {
	for i := range v.Elems {
		if i+1 < len(v.Elems) && v.Elems[i].Type == '$' && string(v.Elems[i].Str) == "seen-time" {
			v.Elems[i+1] = resp.Value{Type: ':'}
		}
		logBlankSeenTimes(&v.Elems[i])
	}
}

// compareDatasets fails with the first differences between two dumps.
func compareDatasets(t testing.TB, orig, replayed []string) {
	t.Helper()
	if slices.Equal(orig, replayed) {
		return
	}
	in := func(list []string) map[string]bool {
		m := map[string]bool{}
		for _, l := range list {
			m[l] = true
		}
		return m
	}
	a, b := in(orig), in(replayed)
	var msg strings.Builder
	n := 0
	for _, l := range orig {
		if !b[l] && n < 8 {
			fmt.Fprintf(&msg, "\n  only before: %s", logClip(l))
			n++
		}
	}
	for _, l := range replayed {
		if !a[l] && n < 16 {
			fmt.Fprintf(&msg, "\n  only replayed: %s", logClip(l))
			n++
		}
	}
	t.Fatalf("the replayed log differs from the dataset that wrote it (%d keys before, %d after):%s", len(orig), len(replayed), msg.String())
}

func logClip(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "..."
	}
	return s
}

// ---- the randomized workload ---------------------------------------------------

// logParked is a blocking command whose client may be parked. Its reply
// (or nil: the command must be retried on the shards of all its keys) comes
// through ch.
type logParked struct {
	ch   chan []byte
	db   int
	args [][]byte
	w    *keyspace.Waiter
}

func (p *logParked) Unblocked(reply []byte, retry bool) {
	if retry {
		reply = nil
	}
	p.ch <- reply
}

// logWorkload issues random commands against one runtime; several run at once
// on the same keys.
type logWorkload struct {
	t     testing.TB
	rt    *Runtime
	table *command.Table
	r     *rand.Rand
	ctx   keyspace.Ctx
	calls []*logParked // blocked clients not yet answered
	n     int          // commands issued
}

func (w *logWorkload) do(db int, args ...string) []byte {
	w.n++
	return logExec(w.rt, w.table, &w.ctx, db, time.Now().UnixMilli(), logArgv(args...))
}

// park runs a blocking command as a client that may be parked.
func (w *logWorkload) park(db int, args ...string) {
	w.n++
	p := &logParked{ch: make(chan []byte, 1), db: db, args: logArgv(args...)}
	w.start(p, 0)
	w.calls = append(w.calls, p)
}

func (w *logWorkload) start(p *logParked, retryDeadline int64) {
	c := &keyspace.Ctx{Blocker: p, RetryDeadline: retryDeadline}
	logExec(w.rt, w.table, c, p.db, time.Now().UnixMilli(), slices.Clone(p.args))
	p.w = c.Blocked
	if c.Blocked == nil {
		p.ch <- c.Out
	}
}

// reap collects answered blocked clients and retries those that must be.
func (w *logWorkload) reap() {
	left := w.calls[:0]
	for _, p := range w.calls {
		select {
		case reply := <-p.ch:
			if reply == nil { // retry, as netloop does, with the first deadline
				w.start(p, p.w.Deadline())
				left = append(left, p)
			}
		default:
			left = append(left, p)
		}
	}
	w.calls = left
}

// finish waits for every blocked client (they all have short timeouts).
func (w *logWorkload) finish() {
	deadline := time.Now().Add(10 * time.Second)
	for len(w.calls) > 0 {
		if time.Now().After(deadline) {
			w.t.Errorf("%d blocked clients never answered", len(w.calls))
			return
		}
		w.reap()
		time.Sleep(2 * time.Millisecond)
	}
}

// multi runs cmds as one MULTI/EXEC transaction, switching databases
// inside it as a client's SELECT would.
func (w *logWorkload) multi(cmds []logDBCmd) {
	w.rt.HoldAll()
	now := time.Now().UnixMilli()
	for _, q := range cmds {
		w.n++
		c := &w.ctx
		c.Bind(w.rt.env)
		c.DB, c.Now, c.Blocker = q.db, now, nil
		c.Cmd, c.Args, c.Out = w.table.Lookup(q.args[0]), q.args, c.Out[:0]
		w.rt.ExecHeld(c)
	}
	w.rt.ReleaseAll()
}

type logDBCmd struct {
	db   int
	args [][]byte
}

func (w *logWorkload) pick(list ...string) string { return list[w.r.IntN(len(list))] }
func (w *logWorkload) num(n int) string           { return strconv.Itoa(w.r.IntN(n)) }
func (w *logWorkload) db() int                    { return w.r.IntN(3) }

// keys of each type; a hash tag puts some on one shard so that multi-key
// commands run both on one shard and across shards.
func (w *logWorkload) key(typ string) string {
	n := 5
	if typ == "t" { // fewer streams, so that groups and their PELs build up
		n = 3
	}
	i := w.r.IntN(n)
	if i < 2 {
		return fmt.Sprintf("{%s}%d", typ, i)
	}
	return fmt.Sprintf("%s:%d", typ, i)
}

func (w *logWorkload) member() string {
	return w.pick("a", "b", "c", "d", "e", "f", "g", "h", "1", "2", "3", "10", "long-member-"+w.num(20))
}
func (w *logWorkload) value() string {
	return w.pick("v", w.num(1000), "x"+w.num(50), strings.Repeat("y", 20+w.r.IntN(20)))
}

// ttlArgs returns a random time to live in any form: short ones expire
// during the run, a few are already past.
func (w *logWorkload) ttlArgs(now int64) []string {
	ms := int64(1 + w.r.IntN(40)) // expires during the run
	if w.r.IntN(3) == 0 {
		ms = int64(60_000 + w.r.IntN(1_000_000))
	}
	switch w.r.IntN(5) {
	case 0:
		return []string{"EX", strconv.FormatInt(max(ms/1000, 1), 10)}
	case 1:
		return []string{"PX", strconv.FormatInt(ms, 10)}
	case 2:
		return []string{"EXAT", strconv.FormatInt((now+ms)/1000+int64(w.r.IntN(2)), 10)}
	case 3:
		at := now + ms
		if w.r.IntN(8) == 0 {
			at = now - 1000 // already past: the key goes
		}
		return []string{"PXAT", strconv.FormatInt(at, 10)}
	}
	return []string{"KEEPTTL"}
}

func (w *logWorkload) streamID() string {
	switch w.r.IntN(4) {
	case 0:
		return fmt.Sprintf("%d-*", time.Now().UnixMilli()+int64(w.r.IntN(3)))
	case 1:
		return fmt.Sprintf("%d-%d", time.Now().UnixMilli()+1000, w.r.IntN(50))
	}
	return "*"
}

// step issues one random command.
func (w *logWorkload) step() {
	db := w.db()
	now := time.Now().UnixMilli()
	if w.r.IntN(4) == 0 {
		w.streamStep(db, now)
		return
	}
	switch w.r.IntN(48) {
	// strings
	case 0:
		args := []string{"SET", w.key("s"), w.value()}
		if w.r.IntN(2) == 0 {
			args = append(args, w.ttlArgs(now)...)
		}
		if w.r.IntN(4) == 0 {
			args = append(args, w.pick("NX", "XX"))
		}
		if w.r.IntN(4) == 0 {
			args = append(args, "GET")
		}
		w.do(db, args...)
	case 1:
		w.do(db, w.pick("SETEX", "PSETEX"), w.key("s"), strconv.Itoa(1+w.r.IntN(30)), w.value())
	case 2:
		w.do(db, w.pick("SETNX", "GETSET", "APPEND"), w.key("s"), w.value())
	case 3:
		w.do(db, w.pick("GETDEL", "INCR", "DECR"), w.key(w.pick("s", "n")))
	case 4:
		args := []string{"GETEX", w.key("s")}
		switch w.r.IntN(4) {
		case 0:
			args = append(args, "PERSIST")
		case 1:
			if ttl := w.ttlArgs(now); ttl[0] != "KEEPTTL" {
				args = append(args, ttl...)
			}
		case 2: // long enough to outlive the run: replayed, a relative time would not
			args = append(args, w.pick("EX", "PX"), strconv.Itoa(100_000+w.r.IntN(100_000)))
		}
		w.do(db, args...)
	case 5:
		w.do(db, "INCRBYFLOAT", w.key("f"), w.pick("0.1", "-1.5", "3e2", "1.0000000001", "7"))
	case 6:
		w.do(db, "MSET", w.key("s"), w.value(), w.key("s"), w.value(), w.key("n"), w.num(100))
	case 7:
		w.do(db, "INCRBY", w.key("n"), strconv.Itoa(w.r.IntN(200)-100))
	case 8:
		w.do(db, "SETRANGE", w.key("s"), w.num(30), w.value())
	// generic
	case 9, 10:
		key := w.key(w.pick("s", "n", "f", "l", "z", "h", "t", "x"))
		flags := []string{}
		if w.r.IntN(3) == 0 {
			flags = append(flags, w.pick("NX", "XX", "GT", "LT"))
		}
		ms := int64(1 + w.r.IntN(40))
		if w.r.IntN(3) == 0 {
			ms = 100_000 + int64(w.r.IntN(100_000))
		}
		if w.r.IntN(10) == 0 {
			ms = -5000
		}
		var args []string
		switch w.r.IntN(4) {
		case 0:
			args = []string{"EXPIRE", key, strconv.FormatInt(ms/1000+1, 10)}
		case 1:
			args = []string{"PEXPIRE", key, strconv.FormatInt(ms, 10)}
		case 2:
			args = []string{"EXPIREAT", key, strconv.FormatInt((now+ms)/1000+1, 10)}
		default:
			args = []string{"PEXPIREAT", key, strconv.FormatInt(now+ms, 10)}
		}
		w.do(db, append(args, flags...)...)
	case 11:
		w.do(db, w.pick("PERSIST", "DEL", "UNLINK"), w.key(w.pick("s", "l", "z", "h", "x", "t")))
	case 12:
		typ := w.pick("s", "l", "x", "z", "h", "t")
		w.do(db, w.pick("RENAME", "RENAMENX"), w.key(typ), w.key(typ))
	case 13:
		typ := w.pick("s", "l", "x", "z", "h", "t")
		args := []string{"COPY", w.key(typ), w.key(typ)}
		if w.r.IntN(2) == 0 {
			args = append(args, "DB", strconv.Itoa(w.db()))
		}
		if w.r.IntN(2) == 0 {
			args = append(args, "REPLACE")
		}
		w.do(db, args...)
	// lists
	case 14, 15:
		args := []string{w.pick("LPUSH", "RPUSH", "LPUSH", "RPUSH", "LPUSHX", "RPUSHX"), w.key("l")}
		for range 1 + w.r.IntN(4) {
			args = append(args, w.member())
		}
		w.do(db, args...)
	case 16:
		args := []string{w.pick("LPOP", "RPOP"), w.key("l")}
		if w.r.IntN(2) == 0 {
			args = append(args, w.num(4))
		}
		w.do(db, args...)
	case 17:
		switch w.r.IntN(4) {
		case 0:
			w.do(db, "LSET", w.key("l"), strconv.Itoa(w.r.IntN(6)-3), w.member())
		case 1:
			w.do(db, "LINSERT", w.key("l"), w.pick("BEFORE", "AFTER"), w.member(), w.member())
		case 2:
			w.do(db, "LREM", w.key("l"), strconv.Itoa(w.r.IntN(5)-2), w.member())
		default:
			w.do(db, "LTRIM", w.key("l"), strconv.Itoa(w.r.IntN(3)), strconv.Itoa(w.r.IntN(12)-2))
		}
	case 18:
		if w.r.IntN(2) == 0 {
			w.do(db, "LMOVE", w.key("l"), w.key("l"), w.pick("LEFT", "RIGHT"), w.pick("left", "right"))
		} else {
			w.do(db, "RPOPLPUSH", w.key("l"), w.key("l"))
		}
	case 19:
		args := []string{"LMPOP", "2", w.key("l"), w.key("l"), w.pick("LEFT", "RIGHT")}
		if w.r.IntN(2) == 0 {
			args = append(args, "COUNT", strconv.Itoa(1+w.r.IntN(5)))
		}
		w.do(db, args...)
	case 20, 21:
		timeout := w.pick("0.01", "0.05", "0.2")
		switch w.r.IntN(4) {
		case 0:
			w.park(db, w.pick("BLPOP", "BRPOP"), w.key("l"), w.key("l"), timeout)
		case 1:
			w.park(db, "BLMOVE", w.key("l"), w.key("l"), w.pick("LEFT", "RIGHT"), w.pick("LEFT", "RIGHT"), timeout)
		case 2:
			w.park(db, "BRPOPLPUSH", w.key("l"), w.key("l"), timeout)
		default:
			w.park(db, "BLMPOP", timeout, "2", w.key("l"), w.key("l"), w.pick("LEFT", "RIGHT"), "COUNT", strconv.Itoa(1+w.r.IntN(3)))
		}
	// sets
	case 22, 23:
		args := []string{w.pick("SADD", "SADD", "SREM"), w.key("x")}
		for range 1 + w.r.IntN(6) {
			args = append(args, w.member())
		}
		w.do(db, args...)
	case 24, 25:
		if w.r.IntN(2) == 0 {
			w.do(db, "SPOP", w.key("x"))
		} else {
			w.do(db, "SPOP", w.key("x"), w.num(8))
		}
	case 26:
		switch w.r.IntN(3) {
		case 0:
			w.do(db, "SMOVE", w.key("x"), w.key("x"), w.member())
		default:
			w.do(db, w.pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), w.key("x"), w.key("x"), w.key("x"))
		}
	// sorted sets
	case 27, 28:
		args := []string{"ZADD", w.key("z")}
		if w.r.IntN(4) == 0 {
			args = append(args, w.pick("NX", "XX", "GT", "LT", "CH"))
		}
		if w.r.IntN(6) == 0 {
			args = append(args, "INCR", w.pick("1.5", "-0.1", "3"), w.member())
		} else {
			for range 1 + w.r.IntN(4) {
				args = append(args, w.pick("1", "2.5", "-3", "0.1", "1e3", w.num(100)), w.member())
			}
		}
		w.do(db, args...)
	case 29:
		w.do(db, w.pick("ZINCRBY", "ZINCRBY"), w.key("z"), w.pick("0.1", "2", "-1.25"), w.member())
	case 30:
		args := []string{w.pick("ZPOPMIN", "ZPOPMAX"), w.key("z")}
		if w.r.IntN(2) == 0 {
			args = append(args, w.num(4))
		}
		w.do(db, args...)
	case 31:
		args := []string{"ZMPOP", "2", w.key("z"), w.key("z"), w.pick("MIN", "MAX")}
		if w.r.IntN(2) == 0 {
			args = append(args, "COUNT", strconv.Itoa(1+w.r.IntN(4)))
		}
		w.do(db, args...)
	case 32, 33:
		timeout := w.pick("0.01", "0.05", "0.2")
		if w.r.IntN(2) == 0 {
			w.park(db, w.pick("BZPOPMIN", "BZPOPMAX"), w.key("z"), w.key("z"), timeout)
		} else {
			w.park(db, "BZMPOP", timeout, "2", w.key("z"), w.key("z"), w.pick("MIN", "MAX"), "COUNT", strconv.Itoa(1+w.r.IntN(3)))
		}
	case 34:
		switch w.r.IntN(4) {
		case 0:
			w.do(db, "ZREM", w.key("z"), w.member(), w.member())
		case 1:
			w.do(db, "ZREMRANGEBYRANK", w.key("z"), "0", w.num(3))
		case 2:
			w.do(db, w.pick("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"), w.key("z"), "2", w.key("z"), w.key("z"))
		default:
			w.do(db, "ZRANGESTORE", w.key("z"), w.key("z"), "0", w.num(4))
		}
	// hashes
	case 35, 36:
		args := []string{w.pick("HSET", "HSET", "HSETNX", "HDEL"), w.key("h"), w.member()}
		if args[0] != "HDEL" {
			args = append(args, w.value())
		}
		w.do(db, args...)
	case 37:
		w.do(db, "HINCRBYFLOAT", w.key("h"), w.pick("f1", "f2"), w.pick("0.1", "-2.5", "1e2", "0.3333"))
	case 38:
		w.do(db, "HINCRBY", w.key("h"), w.pick("i1", "i2"), w.num(50))
	// transactions
	case 39, 40:
		var cmds []logDBCmd
		for range 2 + w.r.IntN(4) {
			d := db
			if w.r.IntN(3) == 0 {
				d = w.db()
			}
			switch w.r.IntN(8) {
			case 0:
				cmds = append(cmds, logDBCmd{d, logArgv("SET", w.key("s"), w.value(), "PX", strconv.Itoa(1+w.r.IntN(100000)))})
			case 1:
				cmds = append(cmds, logDBCmd{d, logArgv("SPOP", w.key("x"), w.num(3))})
			case 2:
				cmds = append(cmds, logDBCmd{d, logArgv("INCRBYFLOAT", w.key("f"), "0.7")})
			case 3:
				cmds = append(cmds, logDBCmd{d, logArgv("EXPIRE", w.key("l"), w.num(100))})
			case 4:
				cmds = append(cmds, logDBCmd{d, logArgv("BLPOP", w.key("l"), "0")})
			case 5:
				cmds = append(cmds, logDBCmd{d, logArgv("XADD", w.key("t"), "MAXLEN", "~", "3", "*", "f", "v")})
			case 6:
				cmds = append(cmds, logDBCmd{d, logArgv("XREADGROUP", "GROUP", "g1", "erin", "COUNT", "2", "STREAMS", w.key("t"), ">")})
			default:
				cmds = append(cmds, logDBCmd{d, logArgv("RPUSH", w.key("l"), w.member())})
			}
		}
		w.multi(cmds)
	case 41:
		if w.r.IntN(20) == 0 {
			w.do(db, "FLUSHDB")
		}
	case 42:
		w.do(db, "SPOP", w.key("x"), strconv.Itoa(20)) // the whole set: DEL
	default:
		// Reads that expire keys lazily (each logs a DEL).
		w.do(db, w.pick("GET", "TYPE", "EXISTS", "TTL"), w.key(w.pick("s", "n", "f", "l", "z", "h", "t", "x")))
	}
}

// streamStep issues one random stream command (a quarter of all commands):
// entries, trimming and consumer groups with their PELs.
func (w *logWorkload) streamStep(db int, now int64) {
	db %= 2
	switch w.r.IntN(13) {
	case 0, 1, 2:
		args := []string{"XADD", w.key("t")}
		switch w.r.IntN(6) {
		case 0:
			args = append(args, "MAXLEN", "~", w.num(10))
		case 1:
			args = append(args, "MAXLEN", w.pick("=", "~"), w.num(12), "LIMIT", w.num(10))
			if args[len(args)-4] == "=" {
				args = args[:len(args)-2]
			}
		case 2:
			args = append(args, "MINID", "~", fmt.Sprintf("%d", time.Now().UnixMilli()-int64(w.r.IntN(30))))
		case 3:
			args = append(args, "MAXLEN", w.num(15))
		}
		args = append(args, w.streamID(), "f", w.value())
		if w.r.IntN(3) == 0 {
			args = append(args, "g", w.value())
		}
		w.do(db, args...)
	case 3:
		if w.r.IntN(2) == 0 {
			w.do(db, "XTRIM", w.key("t"), "MAXLEN", w.pick("~", "=", "~"), w.num(12))
		} else {
			w.do(db, "XTRIM", w.key("t"), "MINID", "~", fmt.Sprintf("%d", time.Now().UnixMilli()-int64(w.r.IntN(50))))
		}
	case 4:
		key := w.key("t")
		if v := logReply(w.t, w.do(db, "XRANGE", key, "-", "+", "COUNT", "3")); len(v.Elems) > 0 {
			w.do(db, "XDEL", key, string(v.Elems[w.r.IntN(len(v.Elems))].Elems[0].Str))
		}
	case 5, 6:
		switch w.r.IntN(6) {
		case 0, 1:
			w.do(db, "XGROUP", "CREATE", w.key("t"), w.pick("g1", "g2"), w.pick("0", "$"), "MKSTREAM")
		case 2:
			w.do(db, "XGROUP", "SETID", w.key("t"), w.pick("g1", "g2"), w.pick("0", "$"))
		case 3:
			w.do(db, "XGROUP", w.pick("CREATECONSUMER", "DELCONSUMER"), w.key("t"), w.pick("g1", "g2"), w.pick("alice", "bob"))
		case 4:
			if w.r.IntN(4) == 0 {
				w.do(db, "XGROUP", "DESTROY", w.key("t"), w.pick("g1", "g2"))
			}
		default:
			w.do(db, "XSETID", w.key("t"), fmt.Sprintf("%d-0", time.Now().UnixMilli()+5000))
		}
	case 7, 8, 9:
		args := []string{"XREADGROUP", "GROUP", w.pick("g1", "g2"), w.pick("alice", "bob", "carol")}
		if w.r.IntN(2) == 0 {
			args = append(args, "COUNT", strconv.Itoa(1+w.r.IntN(4)))
		}
		if w.r.IntN(4) == 0 {
			args = append(args, "NOACK")
		}
		id := w.pick(">", ">", "0")
		if w.r.IntN(3) == 0 && id == ">" {
			args = append(args, "BLOCK", w.pick("10", "50", "200"), "STREAMS", w.key("t"), id)
			w.park(db, args...)
			return
		}
		w.do(db, append(args, "STREAMS", w.key("t"), id)...)
	case 10:
		key, g := w.key("t"), w.pick("g1", "g2")
		v := logReply(w.t, w.do(db, "XPENDING", key, g, "-", "+", "5"))
		if v.Type != '*' || len(v.Elems) == 0 {
			return
		}
		id := string(v.Elems[w.r.IntN(len(v.Elems))].Elems[0].Str)
		if w.r.IntN(3) == 0 {
			w.do(db, "XACK", key, g, id)
			return
		}
		args := []string{"XCLAIM", key, g, w.pick("alice", "bob", "dave"), w.pick("0", "5", "100000"), id}
		if w.r.IntN(3) == 0 {
			args = append(args, "0-1") // not pending: FORCE makes it so if it exists
		}
		switch w.r.IntN(4) {
		case 0:
			args = append(args, "IDLE", w.num(500))
		case 1:
			args = append(args, "TIME", strconv.FormatInt(now-int64(w.r.IntN(1000)), 10))
		case 2:
			args = append(args, "RETRYCOUNT", w.num(9))
		}
		if w.r.IntN(3) == 0 {
			args = append(args, "JUSTID")
		}
		if w.r.IntN(4) == 0 {
			args = append(args, "FORCE")
		}
		if w.r.IntN(4) == 0 {
			args = append(args, "LASTID", fmt.Sprintf("%d-0", now+int64(w.r.IntN(3000))))
		}
		w.do(db, args...)
	case 11:
		args := []string{"XAUTOCLAIM", w.key("t"), w.pick("g1", "g2"), w.pick("carol", "dave"), w.pick("0", "10"), "0-0", "COUNT", strconv.Itoa(1 + w.r.IntN(4))}
		if w.r.IntN(3) == 0 {
			args = append(args, "JUSTID")
		}
		w.do(db, args...)
	case 12: // plain readers share the code that serves groups
		if w.r.IntN(2) == 0 {
			w.park(db, "XREAD", "COUNT", "2", "BLOCK", w.pick("10", "100"), "STREAMS", w.key("t"), w.key("t"), "$", "$")
		} else {
			w.do(db, "XREAD", "COUNT", "3", "STREAMS", w.key("t"), "0")
		}
	}
}

// TestAppendLogReplaysExactly is the proof: a randomized workload of every
// write command, with expiry, blocked clients, transactions and consumer
// groups, is logged, the log replayed into a fresh runtime, and both
// datasets compared exactly. Several workers share the keys; each seed is a
// different run.
func TestAppendLogReplaysExactly(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			runReplayWorkload(t, seed, 3, 700)
		})
	}
}

func runReplayWorkload(t *testing.T, seed uint64, workers, steps int) {
	table := command.New()
	rt := newRuntimeForLog(t, table, true)
	log := &memLog{}
	rt.SetAppendLog(log)
	var wg sync.WaitGroup
	total := make([]int, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &logWorkload{t: t, rt: rt, table: table, r: rand.New(rand.NewPCG(seed, uint64(i)))}
			for s := range steps {
				w.step()
				if s%8 == 0 {
					w.reap()
				}
				if s%100 == 50 {
					time.Sleep(15 * time.Millisecond) // short TTLs pass; the active cycle runs
				}
			}
			w.finish()
			total[i] = w.n
		}()
	}
	wg.Wait()
	time.Sleep(30 * time.Millisecond) // let the active cycle delete more expired keys
	rt.Close()                        // no more active expiry: the dataset holds still
	checkValueWords(t, rt)
	now := time.Now().UnixMilli()
	before := dumpDataset(t, rt, table, now)
	logged := log.bytes()

	replayed := newRuntimeForLog(t, table, false)
	replayInto(t, replayed, logged)
	after := dumpDataset(t, replayed, table, now)
	compareDatasets(t, before, after)
	checkValueWords(t, replayed)

	cmds := logCommands(t, logged)
	counts := map[string]int{}
	for _, c := range cmds {
		counts[strings.ToUpper(string(c[0]))]++
	}
	t.Logf("%d commands issued, %d keys compared, %d log records (%d bytes); DEL %d, SREM %d, PEXPIREAT %d, XCLAIM %d, MULTI %d",
		logSum(total), len(before), len(cmds), len(logged), counts["DEL"], counts["SREM"], counts["PEXPIREAT"], counts["XCLAIM"], counts["MULTI"])
	for _, name := range []string{"DEL", "SREM", "PEXPIREAT", "XCLAIM", "MULTI", "LPOP", "ZPOPMIN", "XGROUP", "SET", "HSET"} {
		if counts[name] == 0 {
			t.Errorf("the workload logged no %s: it no longer exercises that rewrite", name)
		}
	}
	if len(before) < 20 {
		t.Errorf("only %d keys at the end: the comparison proves little", len(before))
	}
}

func logSum(n []int) int {
	s := 0
	for _, v := range n {
		s += v
	}
	return s
}

// ---- the bytes Redis writes ------------------------------------------------------

// redisAOF is a real redis-server writing an append-only file.
type redisAOF struct {
	t    testing.TB
	dir  string
	addr string
	conn *aofRedisConn
}

// startRedisAOF runs redis-server with appendonly yes and appendfsync always
// in a temporary directory, with a connection to it; both end at t.Cleanup.
func startRedisAOF(t testing.TB) *redisAOF {
	t.Helper()
	srv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "yes",
		"--appendfsync", "always", "--stream-node-max-entries", "4", "--enable-debug-command", "yes")
	c, err := dialAOFRedis(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	// Keys expire only when a command touches them, as on the svcdb side
	// (whose runtime is not started): Redis' active expiry would log a
	// DEL whenever its cycle came, before or after the point a case starts
	// reading the log (a key given 1 ms to live in a case's setup was
	// sometimes deleted, and its DEL logged, before the case began).
	if v := c.do("DEBUG", "SET-ACTIVE-EXPIRE", "0"); v.Type == '-' {
		t.Fatalf("DEBUG SET-ACTIVE-EXPIRE 0: %s", v.Str)
	}
	return &redisAOF{t: t, dir: srv.Dir, addr: srv.Addr, conn: c}
}

// incr reads Redis' incremental AOF file.
func (r *redisAOF) incr() []byte {
	files, _ := filepath.Glob(filepath.Join(r.dir, "appendonlydir", "*.incr.aof"))
	if len(files) != 1 {
		r.t.Fatalf("want one incr AOF file; got %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

// aofRedisConn is a minimal RESP2 client for redis-server.
type aofRedisConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialAOFRedis(addr string) (*aofRedisConn, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	return &aofRedisConn{c: c, r: bufio.NewReader(c)}, nil
}

func (c *aofRedisConn) close() { c.c.Close() }

func (c *aofRedisConn) send(args ...string) {
	if _, err := c.c.Write(keyspace.AppendCommand(nil, logArgv(args...))); err != nil {
		panic(err) // the reference server went away: the test cannot go on
	}
}

func (c *aofRedisConn) read() resp.Value {
	var buf []byte
	c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		if len(buf) > 0 {
			if v, n, err := resp.ReadReply(buf); err == nil && n == len(buf) {
				return v
			}
		}
		b, err := c.r.ReadByte()
		if err != nil {
			panic(fmt.Sprintf("reading from redis-server: %v (have %q)", err, buf))
		}
		buf = append(buf, b)
	}
}

func (c *aofRedisConn) do(args ...string) resp.Value {
	c.send(args...)
	return c.read()
}

// blockedClients polls INFO until n clients are blocked.
func (c *aofRedisConn) waitBlocked(t testing.TB, n int) {
	t.Helper()
	want := fmt.Sprintf("blocked_clients:%d\r\n", n)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(string(c.do("INFO", "clients").Str), want) {
			return
		}
	}
	t.Fatalf("redis-server never had %d blocked clients", n)
}

// logSvcdbSide is a runtime with its log in memory, run like one client.
type logSvcdbSide struct {
	t     testing.TB
	rt    *Runtime
	table *command.Table
	log   *memLog
	ctx   keyspace.Ctx
}

func newLogSvcdbSide(t testing.TB) *logSvcdbSide {
	table := command.New()
	rt := newRuntimeForLog(t, table, false)
	rt.SetEncodingLimits(keyspace.EncodingLimits{
		HashMaxListpackEntries: 512, HashMaxListpackValue: 64, SetMaxIntsetEntries: 512,
		ZSetMaxListpackEntries: 128, ZSetMaxListpackValue: 64, ListMaxListpackSize: -2,
		StreamNodeMaxEntries: 4, // as the redis-server of these tests
	})
	t.Cleanup(rt.Close)
	s := &logSvcdbSide{t: t, rt: rt, table: table, log: &memLog{}}
	rt.SetAppendLog(s.log)
	s.do("SET", "prime", "x") // the log has selected database 0, as Redis' has
	s.do("DEL", "prime")
	return s
}

func (s *logSvcdbSide) do(args ...string) resp.Value {
	return logReply(s.t, logExec(s.rt, s.table, &s.ctx, 0, time.Now().UnixMilli(), logArgv(args...)))
}

// records renders log bytes one command per line, normalized: numbers and
// stream IDs within a day of now become "<now+Ns>" (Redis and svcdb read
// their clocks a few ms apart), and the arguments at the positions members
// lists become "<m>" (what SPOP chose at random).
func logRecords(t testing.TB, b []byte, now int64, randomArgs map[string]int) string {
	t.Helper()
	var lines []string
	for _, args := range logCommands(t, b) {
		var words []string
		for i, a := range args {
			w := logNormalizeTime(string(a), now)
			if pos, ok := randomArgs[strings.ToUpper(string(args[0]))]; ok && i == pos {
				w = "<m>"
			}
			words = append(words, w)
		}
		lines = append(lines, strings.Join(words, " "))
	}
	return strings.Join(lines, "\n")
}

var logStreamIDRe = regexp.MustCompile(`^(\d+)-(\d+)$`)

func logNormalizeTime(s string, now int64) string {
	rel := func(v int64) (string, bool) {
		if v < now-86_400_000 || v > now+86_400_000 {
			return "", false
		}
		return fmt.Sprintf("<now%+ds>", int64(math.Round(float64(v-now)/1000))), true
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		if r, ok := rel(v); ok {
			return r
		}
	}
	if m := logStreamIDRe.FindStringSubmatch(s); m != nil {
		if v, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			if r, ok := rel(v); ok {
				return r + "-" + m[2]
			}
		}
	}
	return s
}

// aofCase is one command (or a few) whose log records are compared with
// redis-server's. blocked runs before cmds on a second connection (svcdb:
// a parked client) and must block; cmds then serve it. ours, when set, is
// what svcdb logs where it deliberately differs (see docs/persistence.md);
// Redis must still log the bytes want describes.
type aofCase struct {
	name    string
	setup   [][]string
	blocked []string
	cmds    [][]string
	want    string // Redis' records, normalized
	ours    string // svcdb's, when they deliberately differ
	random  map[string]int
}

var aofCases = []aofCase{
	{name: "EXPIRE", setup: [][]string{{"SET", "k", "v"}}, cmds: [][]string{{"EXPIRE", "k", "100"}},
		want: "PEXPIREAT k <now+100s>"},
	{name: "PEXPIRE XX", setup: [][]string{{"SET", "k", "v", "EX", "10"}}, cmds: [][]string{{"PEXPIRE", "k", "50000", "xx"}},
		want: "PEXPIREAT k <now+50s> xx"},
	{name: "EXPIREAT GT", setup: [][]string{{"SET", "k", "v", "EX", "10"}}, cmds: [][]string{{"EXPIREAT", "k", "4102444800", "GT"}},
		want: "PEXPIREAT k 4102444800000 GT"},
	{name: "PEXPIREAT as given", setup: [][]string{{"SET", "k", "v"}}, cmds: [][]string{{"pexpireat", "k", "4102444800000"}},
		want: "pexpireat k 4102444800000"},
	{name: "EXPIRE in the past", setup: [][]string{{"SET", "k", "v"}}, cmds: [][]string{{"EXPIRE", "k", "-1"}, {"PEXPIREAT", "k", "1"}},
		want: "DEL k"},
	{name: "SET EX NX GET", cmds: [][]string{{"SET", "k", "v", "EX", "100", "NX", "GET"}},
		want: "SET k v PXAT <now+100s>"},
	{name: "SET PXAT XX", setup: [][]string{{"SET", "k", "old"}}, cmds: [][]string{{"SET", "k", "v", "PXAT", "4102444800000", "XX"}},
		want: "SET k v PXAT 4102444800000"},
	{name: "SET KEEPTTL as given", setup: [][]string{{"SET", "k", "old", "EX", "100"}}, cmds: [][]string{{"set", "k", "v", "keepttl"}},
		want: "set k v keepttl"},
	{name: "SETEX PSETEX", cmds: [][]string{{"SETEX", "k", "100", "v"}, {"PSETEX", "k2", "20000", "v"}},
		want: "SET k v PXAT <now+100s>\nSET k2 v PXAT <now+20s>"},
	{name: "SET EXAT in the past", cmds: [][]string{{"SET", "k", "v", "EXAT", "1"}},
		want: "SET k v PXAT 1000", ours: "DEL k"},
	{name: "GETEX", setup: [][]string{{"SET", "k", "v"}},
		cmds: [][]string{{"GETEX", "k", "EX", "100"}, {"GETEX", "k", "PERSIST"}, {"GETEX", "k", "PERSIST"}, {"GETEX", "k", "PXAT", "4102444800000"}, {"GETEX", "k"}, {"GETEX", "k", "EXAT", "1"}},
		want: "PEXPIREAT k <now+100s>\nPERSIST k\nPEXPIREAT k 4102444800000\nDEL k"},
	{name: "GETSET GETDEL", setup: [][]string{{"SET", "k", "v"}}, cmds: [][]string{{"GETSET", "k", "w"}, {"GETDEL", "k"}, {"GETDEL", "k"}},
		want: "SET k w\nDEL k"},
	{name: "INCRBYFLOAT", setup: [][]string{{"SET", "k", "5", "EX", "100"}}, cmds: [][]string{{"INCRBYFLOAT", "k", "0.1"}, {"INCRBYFLOAT", "new", "3e2"}},
		want: "SET k 5.1 KEEPTTL\nSET new 300 KEEPTTL"},
	{name: "HINCRBYFLOAT", setup: [][]string{{"HSET", "h", "f", "1.5"}}, cmds: [][]string{{"HINCRBYFLOAT", "h", "f", "1.0"}, {"HINCRBYFLOAT", "h", "g", "0.1"}},
		want: "HSET h f 2.5\nHSET h g 0.1"},
	{name: "bitmaps", setup: [][]string{{"SET", "a", "\xff"}, {"SET", "d", "x"}},
		cmds: [][]string{{"SETBIT", "b", "9", "1"}, {"SETBIT", "b", "9", "1"}, {"GETBIT", "b", "9"}, {"BITCOUNT", "b"},
			{"BITFIELD", "b", "GET", "u8", "0"}, {"BITFIELD_RO", "b", "GET", "u8", "0"},
			{"BITFIELD", "b", "OVERFLOW", "FAIL", "INCRBY", "u2", "0", "9"}, {"BITFIELD", "b", "SET", "u8", "#3", "7", "GET", "u4", "0"},
			{"BITOP", "AND", "c", "a", "b"}, {"BITOP", "OR", "d", "nosuch"}, {"BITOP", "OR", "d", "nosuch"},
			{"BITFIELD", "created", "OVERFLOW", "FAIL", "INCRBY", "u2", "100", "9"}, {"SETBIT", "a", "0", "1"}, {"SETBIT", "a", "9", "0"}},
		want: "SETBIT b 9 1\nBITFIELD b SET u8 #3 7 GET u4 0\nBITOP AND c a b\nBITOP OR d nosuch\nSETBIT a 9 0"},
	{name: "SPOP one", setup: [][]string{{"SADD", "s", "x"}}, cmds: [][]string{{"SPOP", "s"}, {"SPOP", "s"}},
		want: "SREM s x"},
	{name: "SPOP count", setup: [][]string{{"SADD", "s", "a", "b", "c", "d", "e"}}, cmds: [][]string{{"SPOP", "s", "2"}, {"SPOP", "s", "1"}, {"SPOP", "s", "0"}},
		want: "MULTI\nSREM s <m>\nSREM s <m>\nEXEC\nSREM s <m>", random: map[string]int{"SREM": 2}},
	{name: "SPOP the whole set", setup: [][]string{{"SADD", "s", "1", "2", "3"}}, cmds: [][]string{{"SPOP", "s", "3"}},
		want: "DEL s"},
	{name: "BLPOP BRPOP at once", setup: [][]string{{"RPUSH", "l", "a", "b", "c"}}, cmds: [][]string{{"BLPOP", "nol", "l", "0"}, {"BRPOP", "l", "1"}},
		want: "LPOP l\nRPOP l"},
	{name: "BLMOVE BRPOPLPUSH at once", setup: [][]string{{"RPUSH", "l", "a", "b", "c"}}, cmds: [][]string{{"BLMOVE", "l", "d", "left", "RIGHT", "0"}, {"BRPOPLPUSH", "l", "d", "0"}},
		want: "LMOVE l d left RIGHT\nRPOPLPUSH l d"},
	{name: "BLMPOP LMPOP", setup: [][]string{{"RPUSH", "l", "a", "b", "c"}}, cmds: [][]string{{"BLMPOP", "0", "2", "nol", "l", "LEFT", "COUNT", "2"}, {"LMPOP", "1", "l", "RIGHT", "COUNT", "5"}, {"LMPOP", "1", "l", "RIGHT"}},
		want: "LPOP l 2\nRPOP l 1"},
	{name: "BZPOPMIN BZPOPMAX BZMPOP ZMPOP at once", setup: [][]string{{"ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"}},
		cmds: [][]string{{"BZPOPMIN", "z", "0"}, {"BZPOPMAX", "z", "0"}, {"BZMPOP", "0", "1", "z", "MIN", "COUNT", "2"}, {"ZMPOP", "1", "z", "MAX", "COUNT", "7"}},
		want: "ZPOPMIN z\nZPOPMAX z\nZPOPMIN z 2\nZPOPMAX z 1"},
	{name: "BLPOP served", blocked: []string{"BLPOP", "q", "0"}, cmds: [][]string{{"RPUSH", "q", "a", "b"}},
		want: "RPUSH q a b\nLPOP q"},
	// The keys share a shard: a woken client whose destination lives on
	// another shard is retried as a new command, logged with its
	// directions as given.
	{name: "BLMOVE served", blocked: []string{"BLMOVE", "{q}", "{q}d", "RIGHT", "left", "0"}, cmds: [][]string{{"RPUSH", "{q}", "a", "b"}},
		want: "RPUSH {q} a b\nLMOVE {q} {q}d right left"},
	{name: "BRPOPLPUSH served", blocked: []string{"BRPOPLPUSH", "q", "d", "0"}, cmds: [][]string{{"RPUSH", "q", "a"}},
		want: "RPUSH q a\nRPOPLPUSH q d"},
	{name: "BLMPOP served", blocked: []string{"BLMPOP", "0", "2", "q1", "q", "RIGHT", "COUNT", "3"}, cmds: [][]string{{"RPUSH", "q", "a", "b"}},
		want: "RPUSH q a b\nRPOP q 2"},
	{name: "BZPOPMAX served", blocked: []string{"BZPOPMAX", "zq", "0"}, cmds: [][]string{{"ZADD", "zq", "1", "a", "2", "b"}},
		want: "ZADD zq 1 a 2 b\nZPOPMAX zq"},
	{name: "BZMPOP served", blocked: []string{"BZMPOP", "0", "1", "zq", "MIN", "COUNT", "2"}, cmds: [][]string{{"ZADD", "zq", "1", "a", "2", "b", "3", "c"}},
		want: "ZADD zq 1 a 2 b 3 c\nZPOPMIN zq 2"},
	{name: "XADD IDs", cmds: [][]string{{"XADD", "st", "*", "a", "1"}, {"XADD", "st", "9999999999999-*", "a", "2"}, {"XADD", "st", "9999999999999-7", "a", "3"}, {"XADD", "st", "9999999999999", "a", "3"}},
		want: "XADD st <now+0s>-0 a 1\nXADD st 9999999999999-0 a 2\nXADD st 9999999999999-7 a 3"},
	{name: "XADD approximate trims",
		setup: [][]string{{"XADD", "st", "1-1", "f", "v"}, {"XADD", "st", "1-2", "f", "v"}, {"XADD", "st", "1-3", "f", "v"}, {"XADD", "st", "1-4", "f", "v"}, {"XADD", "st", "1-5", "f", "v"}, {"XADD", "st", "1-6", "f", "v"}, {"XADD", "st", "1-7", "f", "v"}, {"XADD", "st", "1-8", "f", "v"}, {"XADD", "st", "1-9", "f", "v"}, {"XDEL", "st", "1-5"}},
		cmds: [][]string{{"XADD", "st", "MAXLEN", "~", "2", "2-1", "f", "v"}, {"XADD", "st", "MINID", "~", "1-8", "LIMIT", "10", "2-2", "f", "v"},
			{"XADD", "st", "NOMKSTREAM", "MAXLEN", "=", "3", "*", "f", "v"}, {"XADD", "st", "MAXLEN", "~", "100", "9999999999999-1", "f", "v"}},
		want: "XADD st MAXLEN = 2 2-1 f v\nXADD st MINID = 1-9 LIMIT 10 2-2 f v\nXADD st NOMKSTREAM MAXLEN = 3 <now+0s>-0 f v\nXADD st MAXLEN = 4 9999999999999-1 f v"},
	{name: "XTRIM approximate",
		setup: [][]string{{"XADD", "st", "1-1", "f", "v"}, {"XADD", "st", "1-2", "f", "v"}, {"XADD", "st", "1-3", "f", "v"}, {"XADD", "st", "1-4", "f", "v"}, {"XADD", "st", "1-5", "f", "v"}, {"XADD", "st", "1-6", "f", "v"}, {"XADD", "st", "1-7", "f", "v"}, {"XADD", "st", "1-8", "f", "v"}, {"XADD", "st", "1-9", "f", "v"}, {"XADD", "st", "1-10", "f", "v"}},
		cmds:  [][]string{{"XTRIM", "st", "MAXLEN", "~", "5"}, {"XTRIM", "st", "MAXLEN", "~", "5"}, {"XTRIM", "st", "MINID", "~", "1-10"}, {"XTRIM", "st", "MAXLEN", "1"}, {"XTRIM", "st", "MAXLEN", "~", "0"}},
		want:  "XTRIM st MAXLEN = 6\nXTRIM st MINID = 1-9\nXTRIM st MAXLEN 1\nXTRIM st MAXLEN = 0"},
	{name: "XREADGROUP",
		setup: [][]string{{"XADD", "st", "1-1", "a", "1"}, {"XADD", "st", "2-1", "b", "2"}, {"XADD", "st", "3-1", "c", "3"}, {"XGROUP", "CREATE", "st", "g", "0"}},
		cmds:  [][]string{{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "st", ">"}},
		want:  "MULTI\nXCLAIM st g alice 0 1-1 TIME <now+0s> RETRYCOUNT 1 FORCE JUSTID LASTID 1-1\nXCLAIM st g alice 0 2-1 TIME <now+0s> RETRYCOUNT 1 FORCE JUSTID LASTID 2-1\nEXEC",
		ours:  "MULTI\nXCLAIM st g alice 0 1-1 TIME <now+0s> RETRYCOUNT 1 FORCE JUSTID LASTID 1-1\nXCLAIM st g alice 0 2-1 TIME <now+0s> RETRYCOUNT 1 FORCE JUSTID LASTID 2-1\nXGROUP SETID st g 2-1 ENTRIESREAD 2\nEXEC"},
	{name: "XREADGROUP NOACK",
		setup: [][]string{{"XADD", "st", "1-1", "a", "1"}, {"XADD", "st", "2-1", "b", "2"}, {"XGROUP", "CREATE", "st", "g", "0"}},
		cmds:  [][]string{{"XREADGROUP", "GROUP", "g", "carol", "NOACK", "STREAMS", "st", ">"}, {"XREADGROUP", "GROUP", "g", "carol", "NOACK", "STREAMS", "st", ">"}},
		want:  "MULTI\nXGROUP CREATECONSUMER st g carol\nXGROUP SETID st g 2-1 ENTRIESREAD 2\nEXEC"},
	{name: "XREADGROUP history",
		setup: [][]string{{"XADD", "st", "1-1", "a", "1"}, {"XGROUP", "CREATE", "st", "g", "0"}, {"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "st", ">"}},
		cmds:  [][]string{{"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "st", "0"}, {"XREADGROUP", "GROUP", "g", "bob", "STREAMS", "st", "0"}},
		want:  "",
		ours:  "XCLAIM st g alice 0 1-1 TIME <now+0s> RETRYCOUNT 2 FORCE JUSTID LASTID 1-1\nXGROUP CREATECONSUMER st g bob"},
	{name: "XREADGROUP served",
		setup:   [][]string{{"XGROUP", "CREATE", "st", "g", "$", "MKSTREAM"}},
		blocked: []string{"XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "st", ">"},
		cmds:    [][]string{{"XADD", "st", "5-1", "a", "1"}},
		want:    "XADD st 5-1 a 1\nXCLAIM st g alice 0 5-1 TIME <now+0s> RETRYCOUNT 1 FORCE JUSTID LASTID 5-1",
		ours:    "XADD st 5-1 a 1\nMULTI\nXCLAIM st g alice 0 5-1 TIME <now+0s> RETRYCOUNT 1 FORCE JUSTID LASTID 5-1\nXGROUP SETID st g 5-1 ENTRIESREAD 1\nEXEC"},
	{name: "XCLAIM",
		setup: [][]string{{"XADD", "st", "1-1", "a", "1"}, {"XADD", "st", "2-1", "b", "2"}, {"XADD", "st", "3-1", "c", "3"}, {"XADD", "st", "4-1", "d", "4"},
			{"XGROUP", "CREATE", "st", "g", "0"}, {"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "st", ">"}},
		cmds: [][]string{{"XCLAIM", "st", "g", "bob", "0", "1-1"}, {"XCLAIM", "st", "g", "bob", "0", "2-1", "IDLE", "5000", "JUSTID"},
			{"XCLAIM", "st", "g", "bob", "0", "3-1", "TIME", "1000", "RETRYCOUNT", "7", "FORCE", "LASTID", "9-9"},
			{"XDEL", "st", "4-1"}, {"XCLAIM", "st", "g", "bob", "0", "4-1"}, {"XCLAIM", "st", "g", "bob", "999999999", "1-1"}},
		want: "XCLAIM st g bob 0 1-1 TIME <now+0s> RETRYCOUNT 2 FORCE JUSTID LASTID 4-1\nXCLAIM st g bob 0 2-1 TIME <now-5s> RETRYCOUNT 1 FORCE JUSTID LASTID 4-1\n" +
			"XCLAIM st g bob 0 3-1 TIME 1000 RETRYCOUNT 7 FORCE JUSTID LASTID 9-9\nXDEL st 4-1\nXCLAIM st g alice 0 4-1 TIME <now+0s> RETRYCOUNT 1 FORCE JUSTID LASTID 9-9"},
	{name: "XCLAIM LASTID only",
		setup: [][]string{{"XADD", "st", "1-1", "a", "1"}, {"XGROUP", "CREATE", "st", "g", "0"}},
		cmds:  [][]string{{"XCLAIM", "st", "g", "bob", "0", "1-1", "LASTID", "1-5"}, {"XCLAIM", "st", "g", "bob", "0", "1-1", "FORCE"}},
		want:  "XGROUP SETID st g 1-5 ENTRIESREAD -1\nXCLAIM st g bob 0 1-1 TIME <now+0s> RETRYCOUNT 2 FORCE JUSTID LASTID 1-5"},
	{name: "XAUTOCLAIM",
		setup: [][]string{{"XADD", "st", "1-1", "a", "1"}, {"XADD", "st", "2-1", "b", "2"}, {"XADD", "st", "3-1", "c", "3"},
			{"XGROUP", "CREATE", "st", "g", "0"}, {"XREADGROUP", "GROUP", "g", "alice", "STREAMS", "st", ">"}, {"XDEL", "st", "2-1"}},
		cmds: [][]string{{"XAUTOCLAIM", "st", "g", "carol", "0", "0", "COUNT", "10"}, {"XAUTOCLAIM", "st", "g", "dan", "0", "0", "COUNT", "1", "JUSTID"}, {"XAUTOCLAIM", "st", "g", "dan", "99999999", "0"}},
		want: "MULTI\nXCLAIM st g carol 0 1-1 TIME <now+0s> RETRYCOUNT 2 FORCE JUSTID LASTID 3-1\nXCLAIM st g alice 0 2-1 TIME <now+0s> RETRYCOUNT 1 FORCE JUSTID LASTID 3-1\n" +
			"XCLAIM st g carol 0 3-1 TIME <now+0s> RETRYCOUNT 2 FORCE JUSTID LASTID 3-1\nEXEC\nXCLAIM st g dan 0 1-1 TIME <now+0s> RETRYCOUNT 2 FORCE JUSTID LASTID 3-1"},
	{name: "XGROUP XACK XSETID as given",
		setup: [][]string{{"XADD", "st", "1-1", "a", "1"}},
		cmds: [][]string{{"XGROUP", "CREATE", "st", "g", "$"}, {"XGROUP", "CREATECONSUMER", "st", "g", "erin"}, {"XGROUP", "DELCONSUMER", "st", "g", "erin"},
			{"XGROUP", "SETID", "st", "g", "0"}, {"XACK", "st", "g", "1-1"}, {"XSETID", "st", "10-0"}, {"XGROUP", "DESTROY", "st", "g"}},
		want: "XGROUP CREATE st g $\nXGROUP CREATECONSUMER st g erin\nXGROUP DELCONSUMER st g erin\nXGROUP SETID st g 0\nXSETID st 10-0\nXGROUP DESTROY st g"},
	{name: "a write on an expired key", setup: [][]string{{"RPUSH", "l", "a"}, {"PEXPIRE", "l", "50"}}, cmds: [][]string{{"SLEEP"}, {"LSET", "l", "0", "b"}},
		want: "DEL l"},
}

// TestAppendLogMatchesRedis runs each rewritten command against a real
// redis-server with appendonly yes and against svcdb, and compares the
// records both logged for it.
func TestAppendLogMatchesRedis(t *testing.T) {
	red := startRedisAOF(t)
	for _, tc := range aofCases {
		t.Run(tc.name, func(t *testing.T) {
			red.conn.do("FLUSHALL")
			ours := newLogSvcdbSide(t)
			for _, args := range tc.setup {
				if v := red.conn.do(args...); v.Type == '-' {
					t.Fatalf("redis-server: %s: %s", args, v.Str)
				}
				if v := ours.do(args...); v.Type == '-' {
					t.Fatalf("svcdb: %s: %s", args, v.Str)
				}
			}
			redStart, ourStart := len(red.incr()), ours.log.size()
			var redBlocked *aofRedisConn
			var ourBlocked *logParked
			if tc.blocked != nil {
				var err error
				if redBlocked, err = dialAOFRedis(red.addr); err != nil {
					t.Fatal(err)
				}
				defer redBlocked.close()
				redBlocked.send(tc.blocked...)
				red.conn.waitBlocked(t, 1)
				ourBlocked = &logParked{ch: make(chan []byte, 1), args: logArgv(tc.blocked...)}
				w := &logWorkload{t: t, rt: ours.rt, table: ours.table}
				w.start(ourBlocked, 0)
				if ourBlocked.w == nil {
					t.Fatalf("svcdb did not block %s", tc.blocked)
				}
			}
			now := time.Now().UnixMilli()
			for _, args := range tc.cmds {
				if args[0] == "SLEEP" {
					// Past the 50 ms a case's setup gives a key to live. Not
					// 1 ms: Redis' PEXPIRE deletes a key at once (and logs DEL
					// before the case starts reading) when its deadline has
					// passed by the time it checks it, which a busy machine
					// reaches within one command.
					time.Sleep(100 * time.Millisecond)
					continue
				}
				red.conn.do(args...)
				ours.do(args...)
			}
			if redBlocked != nil {
				if v := redBlocked.read(); v.Null {
					t.Fatal("redis-server did not serve the blocked client")
				}
				for served := false; !served; {
					select {
					case reply := <-ourBlocked.ch:
						if reply == nil { // its keys are on two shards: netloop retries it holding both
							w := &logWorkload{t: t, rt: ours.rt, table: ours.table}
							w.start(ourBlocked, ourBlocked.w.Deadline())
							continue
						}
						if v := logReply(t, reply); v.Null {
							t.Fatal("svcdb did not serve the blocked client")
						}
						served = true
					case <-time.After(5 * time.Second):
						t.Fatal("svcdb did not serve the blocked client")
					}
				}
			}
			redGot := logRecords(t, red.incr()[redStart:], now, tc.random)
			ourGot := logRecords(t, ours.log.bytes()[ourStart:], now, tc.random)
			if redGot != tc.want {
				t.Errorf("redis-server logged:\n%s\nwant (as this test expects Redis 7.0 to):\n%s", redGot, tc.want)
			}
			want := tc.want
			if tc.ours != "" {
				want = tc.ours
			}
			if ourGot != want {
				t.Errorf("svcdb logged:\n%s\nwant:\n%s", ourGot, want)
			}
		})
	}
}

// TestRewritesCostNothingWithoutLog: with no append-only log, the commands
// that would log a rewrite allocate nothing for it.
func TestRewritesCostNothingWithoutLog(t *testing.T) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "-race" && s.Value == "true" {
				t.Skip("the race detector allocates; this test runs without -race")
			}
		}
	}
	table := command.New()
	rt := newRuntimeForLog(t, table, false)
	defer rt.Close()
	var c keyspace.Ctx
	now := time.Now().UnixMilli()
	logExec(rt, table, &c, 0, now, logArgv("SET", "k", "v"))
	for _, args := range [][][]byte{
		logArgv("SET", "k", "v", "EX", "100"),
		logArgv("PEXPIRE", "k", "100000", "GT"),
		logArgv("GETEX", "k", "PX", "100000"),
		logArgv("EXPIREAT", "k", "4102444800"),
	} {
		if n := testing.AllocsPerRun(100, func() { logExec(rt, table, &c, 0, now, args) }); n != 0 {
			t.Errorf("%q: %v allocs per run without a log; want 0", args, n)
		}
	}
}
