package replication

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
)

// The master side's building blocks, used by serve.go (see
// docs/replication.md), each tested on its own.

// zeroID is the secondary ID while there is none ("0" x 40, as Redis).
const zeroID = "0000000000000000000000000000000000000000"

// NewID returns a fresh replication ID: 40 lowercase hex characters from
// 20 random bytes (Redis' getRandomHexChars).
func NewID() string {
	var b [IDLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("BUG: crypto/rand failed: %v", err)) // never on Linux >= 3.17
	}
	return hex.EncodeToString(b[:])
}

// IDs are a server's replication IDs (PSYNC2): ID names the history it
// holds, ID2 the history it held before a promotion, valid for offsets
// below Offset2 (Redis' second_replid_offset; -1: no ID2).
type IDs struct {
	ID, ID2 string
	Offset2 int64
}

// NewIDs returns the IDs of a server that just started: a fresh ID, no
// secondary one.
func NewIDs() IDs { return IDs{ID: NewID(), ID2: zeroID, Offset2: -1} }

// Shift makes a fresh ID after a promotion at offset (shiftReplicationId):
// the old ID stays valid as ID2 up to offset+1, so replicas of the old
// master can continue from this one.
func (ids *IDs) Shift(offset int64) {
	ids.ID2, ids.Offset2 = ids.ID, offset+1
	ids.ID = NewID()
}

// Backlog is the newest part of the replication stream, kept for partial
// resyncs: a ring buffer of repl-backlog-size bytes (Redis 7.0 keeps a list
// of shared blocks; one ring is the same bytes for one master). Offsets are
// stream offsets: the byte at offset o is the o-th byte of the stream since
// the ID began, the first being 1 (Redis' repl_backlog_off). Not safe for
// concurrent use: the master's feed owns it.
type Backlog struct {
	buf    []byte
	end    int64 // the offset of the last byte written (master_repl_offset)
	histen int64 // bytes held, <= len(buf)
}

// NewBacklog returns an empty backlog of size bytes whose next byte is
// offset+1.
func NewBacklog(size int, offset int64) *Backlog {
	if size < 1 {
		size = 1
	}
	return &Backlog{buf: make([]byte, size), end: offset}
}

// Size is repl-backlog-size; Offset is the offset of the last byte fed
// (master_repl_offset); First is the offset of the oldest byte held
// (repl_backlog_first_byte_offset; Offset+1 when empty); Len is how many
// bytes are held (repl_backlog_histlen).
func (b *Backlog) Size() int       { return len(b.buf) }
func (b *Backlog) Offset() int64   { return b.end }
func (b *Backlog) First() int64    { return b.end - b.histen + 1 }
func (b *Backlog) Len() int64      { return b.histen }
func (b *Backlog) pos(o int64) int { return int((o - 1) % int64(len(b.buf))) }

// Feed appends stream bytes, dropping the oldest when full.
func (b *Backlog) Feed(p []byte) {
	if len(p) >= len(b.buf) { // only the newest len(buf) bytes can stay
		b.end += int64(len(p) - len(b.buf))
		p = p[len(p)-len(b.buf):]
	}
	for len(p) > 0 {
		at := b.pos(b.end + 1)
		n := copy(b.buf[at:], p)
		p = p[n:]
		b.end += int64(n)
		b.histen = min(b.histen+int64(n), int64(len(b.buf)))
	}
}

// Resize changes repl-backlog-size, keeping the newest bytes that fit.
func (b *Backlog) Resize(size int) {
	if size < 1 {
		size = 1
	}
	keep := min(b.histen, int64(size))
	nb := &Backlog{buf: make([]byte, size), end: b.end - keep}
	nb.Feed(b.Since(b.end - keep + 1))
	*b = *nb
}

// Has reports whether every byte from offset on is held (or offset is the
// next byte to come): a PSYNC at offset can continue.
func (b *Backlog) Has(offset int64) bool {
	return offset >= b.First() && offset <= b.end+1
}

// Since returns a copy of the bytes from offset to the end.
// REQUIRES: Has(offset).
func (b *Backlog) Since(offset int64) []byte {
	n := b.end - offset + 1
	out := make([]byte, 0, n)
	if n <= 0 {
		return out
	}
	at := b.pos(offset)
	first := min(int64(len(b.buf)-at), n)
	out = append(out, b.buf[at:at+int(first)]...)
	return append(out, b.buf[:n-first]...)
}

// PSyncDecision is a master's answer to PSYNC <replid> <offset>.
type PSyncDecision struct {
	Continue bool   // +CONTINUE: send the backlog from Offset
	Offset   int64  // Continue: the first byte to send; else the RDB's offset
	Reply    string // the status line, CRLF included
}

// DecidePSync is masterTryPartialResynchronization's decision: continue
// when the replica asks for our ID, or for our secondary ID at an offset
// not past where that history ended, and the backlog still holds every
// byte from the offset asked; else a full resync at our offset. A replica
// that announced capa psync2 is told our ID with +CONTINUE (it adopts it
// when it continued on our secondary ID), as Redis does. A backlog of nil
// means none exists yet (no replica ever attached): always a full resync.
func DecidePSync(ids IDs, backlog *Backlog, psync2 bool, replID string, offset, masterOffset int64) PSyncDecision {
	full := PSyncDecision{Offset: masterOffset, Reply: "+FULLRESYNC " + ids.ID + " " + strconv.FormatInt(masterOffset, 10) + "\r\n"}
	if replID != ids.ID && (replID != ids.ID2 || ids.ID2 == zeroID || offset > ids.Offset2) {
		return full
	}
	if backlog == nil || !backlog.Has(offset) {
		return full
	}
	d := PSyncDecision{Continue: true, Offset: offset, Reply: "+CONTINUE\r\n"}
	if psync2 {
		d.Reply = "+CONTINUE " + ids.ID + "\r\n"
	}
	return d
}
