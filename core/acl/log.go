package acl

import (
	"github.com/svcdb/svcdb/core/resp"
)

// Context says where a denied command ran (ACL_LOG_CTX_*).
type Context int

// Contexts, as ACL LOG names them.
const (
	CtxTopLevel Context = iota
	CtxMulti
	CtxLua
)

func (c Context) String() string {
	switch c {
	case CtxTopLevel:
		return "toplevel"
	case CtxMulti:
		return "multi"
	case CtxLua:
		return "lua"
	}
	return "unknown"
}

// logGroupingMs is ACL_LOG_GROUPING_MAX_TIME_DELTA.
const logGroupingMs = 60000

// LogEntry is one ACL LOG entry, with Redis 7.0's fields (7.2's entry-id,
// timestamp-created and timestamp-last-updated are not part of 7.0).
type LogEntry struct {
	Count      int64
	Reason     Reason
	Context    Context
	Object     string // the command, key or channel denied, or AUTH's user name
	Username   string
	CTimeMs    int64  // unix ms of the last occurrence
	ClientInfo string // CLIENT INFO line of the last client
}

// aclLog holds entries newest first; guarded by ACL.mu.
type aclLog struct {
	entries []*LogEntry
	maxLen  int
}

// SetLogMaxLen is acllog-max-len: the log keeps at most n entries.
func (a *ACL) SetLogMaxLen(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.log.maxLen = max(n, 0)
	a.log.trim()
}

func (l *aclLog) trim() {
	if len(l.entries) > l.maxLen {
		clear(l.entries[l.maxLen:])
		l.entries = l.entries[:l.maxLen]
	}
}

// Log records a denial or a failed authentication as Redis' addACLLogEntry:
// an entry like one of the ten newest (same reason, context, object and
// user, within 60 s) is bumped to the front and counted instead.
func (a *ACL) Log(e LogEntry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	l := &a.log
	for i := 0; i < len(l.entries) && i < 10; i++ {
		cur := l.entries[i]
		delta := cur.CTimeMs - e.CTimeMs
		if delta < 0 {
			delta = -delta
		}
		if cur.Reason == e.Reason && cur.Context == e.Context && delta <= logGroupingMs &&
			cur.Object == e.Object && cur.Username == e.Username {
			cur.ClientInfo, cur.CTimeMs = e.ClientInfo, e.CTimeMs
			cur.Count++
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = cur
			return
		}
	}
	e.Count = 1
	l.entries = append(l.entries, nil)
	copy(l.entries[1:], l.entries)
	l.entries[0] = &e
	l.trim()
}

// LogReset is ACL LOG RESET.
func (a *ACL) LogReset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.log.entries = nil
}

// LogEntries returns copies of the newest n entries (n < 0: all).
func (a *ACL) LogEntries(n int) []LogEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n < 0 || n > len(a.log.entries) {
		n = len(a.log.entries)
	}
	out := make([]LogEntry, n)
	for i := range out {
		out[i] = *a.log.entries[i]
	}
	return out
}

// AppendLog encodes ACL LOG [count] as Redis does: the newest count entries
// (count < 0 counts as 0), each a map of seven fields.
func (a *ACL) AppendLog(dst []byte, count int64, nowMs int64, resp3 bool) []byte {
	if count < 0 {
		count = 0
	}
	n := int(min(count, int64(1<<30)))
	entries := a.LogEntries(n)
	dst = resp.AppendArrayHeader(dst, len(entries))
	for _, e := range entries {
		dst = resp.AppendMapHeader(dst, 7, resp3)
		dst = resp.AppendBulkString(dst, "count")
		dst = resp.AppendInt(dst, e.Count)
		dst = resp.AppendBulkString(dst, "reason")
		dst = resp.AppendBulkString(dst, e.Reason.String())
		dst = resp.AppendBulkString(dst, "context")
		dst = resp.AppendBulkString(dst, e.Context.String())
		dst = resp.AppendBulkString(dst, "object")
		dst = resp.AppendBulkString(dst, e.Object)
		dst = resp.AppendBulkString(dst, "username")
		dst = resp.AppendBulkString(dst, e.Username)
		dst = resp.AppendBulkString(dst, "age-seconds")
		dst = resp.AppendDouble(dst, float64(nowMs-e.CTimeMs)/1000, resp3)
		dst = resp.AppendBulkString(dst, "client-info")
		dst = resp.AppendBulkString(dst, e.ClientInfo)
	}
	return dst
}
