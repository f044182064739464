package keyspace

import (
	"strconv"
	"sync"

	"github.com/svcdb/svcdb/core/resp"
)

// AppendLog receives every change the shards make, as the RESP commands that
// redo it (package shard/aof writes them to the append-only file). Append
// must copy p and must not block on the disk; it returns the log's end
// offset after p, which the durability waits (aof.Log.NotifyDurable) compare against.
type AppendLog interface {
	Append(p []byte) int64
}

// LogFeed turns executed write commands into log records. Records from
// all shards go through one mutex so the SELECT state of the log is one
// sequence: a record is prefixed with SELECT when its database differs from
// the previous record's, as Redis' feedAppendOnlyFile does.
type LogFeed struct {
	mu     sync.Mutex
	log    AppendLog
	lastDB int    // database of the previous record; -1 before the first
	buf    []byte // scratch, guarded by mu

	// txn collects a MULTI/EXEC transaction's records (HoldAll ..
	// ReleaseAll): they are appended at once, wrapped in MULTI/EXEC, so a
	// crash never leaves half a transaction in the log (the loader drops an
	// unterminated MULTI). Guarded by holding every shard.
	txn    []byte
	txnDB  int
	txnOn  bool
	txnCnt int
}

// ResetLogRewrite forgets what a previous command asked the log to record
// instead of its arguments (LogAs).
func (c *Ctx) ResetLogRewrite() { c.rewrite, c.rewriteN = c.rewrite[:0], 0 }

// logEnd records end as the last log offset c's replies depend on.
func (c *Ctx) logEnd(end int64) {
	if end > c.LogEnd {
		c.LogEnd = end
	}
}

// LogAs makes the append-only log record args instead of the command's own
// arguments; called several times, it records every one, wrapped in
// MULTI/EXEC. Handlers call it where replaying the original would not redo
// the same change: relative times become absolute (PEXPIREAT, SET .. PXAT),
// random choices explicit (SPOP -> SREM), served blocking commands their
// non-blocking form (BLPOP -> LPOP), floats their result (INCRBYFLOAT ->
// SET .. KEEPTTL), generated IDs explicit (XADD * -> XADD <id>). It costs
// nothing when the log is off.
func (c *Ctx) LogAs(args ...[]byte) {
	if !c.Logging() {
		return
	}
	c.rewrite = AppendCommand(c.rewrite, args)
	c.rewriteN++
}

// Record records c's command, which changed the dataset: its arguments,
// or what the handler asked for with LogAs.
func (p *LogFeed) Record(c *Ctx) {
	if p.txnOn { // inside EXEC: the transaction is already one MULTI/EXEC
		p.txn = appendSelect(p.txn, &p.txnDB, c.DB)
		p.txn = appendRecord(p.txn, c, false)
		p.txnCnt++
		return
	}
	p.mu.Lock()
	p.buf = appendSelect(p.buf[:0], &p.lastDB, c.DB)
	p.buf = appendRecord(p.buf, c, true)
	end := p.log.Append(p.buf)
	p.mu.Unlock()
	c.logEnd(end)
}

// appendRecord encodes what c's command logs; several commands from LogAs
// are wrapped in MULTI/EXEC when wrap is set.
func appendRecord(dst []byte, c *Ctx, wrap bool) []byte {
	switch {
	case c.rewriteN == 0:
		return AppendCommand(dst, c.Args)
	case c.rewriteN == 1 || !wrap:
		return append(dst, c.rewrite...)
	}
	dst = append(dst, "*1\r\n$5\r\nMULTI\r\n"...)
	dst = append(dst, c.rewrite...)
	return append(dst, "*1\r\n$4\r\nEXEC\r\n"...)
}

// propagateDel records the deletion of key in db by expiry or eviction, as
// Redis propagates a DEL for them (the log is replayed without expiring).
func (p *LogFeed) propagateDel(db int, key string) int64 {
	p.mu.Lock()
	p.buf = appendSelect(p.buf[:0], &p.lastDB, db)
	p.buf = append(p.buf, "*2\r\n$3\r\nDEL\r\n"...)
	p.buf = resp.AppendBulkString(p.buf, key)
	end := p.log.Append(p.buf)
	p.mu.Unlock()
	return end
}

func (p *LogFeed) BeginTxn() {
	p.txn, p.txnOn, p.txnCnt = p.txn[:0], true, 0
	p.txnDB = -1
}

// EndTxn appends the transaction's records wrapped in MULTI/EXEC and returns
// the log offset after them (0 when it changed nothing).
func (p *LogFeed) EndTxn() int64 {
	p.txnOn = false
	if p.txnCnt == 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// The transaction's SELECTs were relative to its own start: begin it
	// with the database of its first record unless the log is already there.
	p.buf = p.buf[:0]
	body := p.txn
	if first, rest, ok := splitSelect(body); ok && first == p.lastDB {
		body = rest
	}
	p.buf = append(p.buf, "*1\r\n$5\r\nMULTI\r\n"...)
	p.buf = append(p.buf, body...)
	p.buf = append(p.buf, "*1\r\n$4\r\nEXEC\r\n"...)
	p.lastDB = p.txnDB
	return p.log.Append(p.buf)
}

// splitSelect reports the database of a record buffer that starts with a
// SELECT, and the buffer after it.
func splitSelect(b []byte) (int, []byte, bool) {
	const head = "*2\r\n$6\r\nSELECT\r\n$"
	if len(b) < len(head) || string(b[:len(head)]) != head {
		return 0, b, false
	}
	rest := b[len(head):]
	i := 0
	for i < len(rest) && rest[i] != '\r' {
		i++
	}
	n, _ := strconv.Atoi(string(rest[:i]))
	rest = rest[i+2:]
	db, _ := strconv.Atoi(string(rest[:n]))
	return db, rest[n+2:], true
}

func appendSelect(dst []byte, last *int, db int) []byte {
	if *last == db {
		return dst
	}
	*last = db
	var num [20]byte
	return AppendCommand(dst, [][]byte{[]byte("SELECT"), strconv.AppendInt(num[:0], int64(db), 10)})
}

// AppendCommand encodes args as a RESP multibulk, the AOF's record format.
func AppendCommand(dst []byte, args [][]byte) []byte {
	dst = resp.AppendArrayHeader(dst, len(args))
	for _, a := range args {
		dst = resp.AppendBulk(dst, a)
	}
	return dst
}

// dropKey deletes o for expiry or eviction, which are not changes made by
// the command that ran into them: the change counter stays (Redis'
// deleteExpiredKeyAndPropagate leaves server.dirty alone; otherwise a write
// command that then fails, LSET on an expired key, would be logged and its
// error stop the replay), and a DEL goes to the append-only log, which is
// replayed without expiring or evicting anything (Redis' propagateDeletion).
// The Env's dropped hook (client tracking) hears of the key first; the
// keyspace event (expired or evicted, of class) is published once it went,
// as Redis' deleteExpiredKeyAndPropagate and performEvictions.
func (d *DB) dropKey(o *Object, pos uint32, class NotifyClass, event string) {
	key := o.Key()
	if st := d.owner; st != nil {
		if p := st.env.prop.Load(); p != nil {
			p.propagateDel(d.num, o.Key())
		}
		if f := st.env.dropped.Load(); f != nil {
			(*f)(d.num, o.Key())
		}
	}
	d.detach(o, pos)
	d.notifyKey(class, event, key)
}

// Logging reports whether the append-only log is on, for handlers that
// must build the arguments they pass to LogAs.
func (c *Ctx) Logging() bool { return c.env != nil && c.env.prop.Load() != nil }
