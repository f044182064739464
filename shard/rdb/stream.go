package rdb

import "bytes"

// Stream listpack layout constants (src/stream.h, t_stream.c).
const (
	streamItemFlagNone       = 0
	streamItemFlagDeleted    = 1
	streamItemFlagSameFields = 2

	// Redis' defaults for stream-node-max-bytes and stream-node-max-entries:
	// AppendStream starts a new node exactly where XADD would have.
	streamNodeMaxBytes   = 4096
	streamNodeMaxEntries = 100
)

// AppendStream appends the value of a TypeStreamListpacks2 entry (after
// AppendKey with that type): entries as Redis' stream listpacks with master
// entries, then length, last ID, first ID, max deleted ID, entries added,
// then the consumer groups with their PELs and consumers, as Redis 7.0's
// rdbSaveObject writes them. Nodes are split where XADD with the default
// stream-node-max-bytes (4096) and stream-node-max-entries (100) would
// split them; deleted entries are not written (the nodes are compact).
func AppendStream(dst []byte, s *Stream) []byte {
	// Build the nodes first: their count comes before them.
	var nodes []byte
	var bounds []streamNodeBounds
	for i := 0; i < len(s.Entries); {
		var n int
		nodes, n = appendStreamNode(nodes, s.Entries[i:])
		bounds = append(bounds, streamNodeBounds{first: i, end: len(nodes)})
		i += n
	}
	dst = AppendLen(dst, uint64(len(bounds)))
	off := 0
	for _, b := range bounds {
		dst = AppendLen(dst, 16)
		dst = appendRawID(dst, s.Entries[b.first].ID)
		dst = AppendLen(dst, uint64(b.end-off))
		dst = append(dst, nodes[off:b.end]...)
		off = b.end
	}
	dst = AppendLen(dst, s.Length)
	dst = appendLenID(dst, s.LastID)
	dst = appendLenID(dst, s.FirstID)
	dst = appendLenID(dst, s.MaxDeletedID)
	dst = AppendLen(dst, s.EntriesAdded)
	dst = AppendLen(dst, uint64(len(s.Groups)))
	for gi := range s.Groups {
		g := &s.Groups[gi]
		dst = AppendString(dst, g.Name)
		dst = appendLenID(dst, g.LastID)
		dst = AppendLen(dst, uint64(g.EntriesRead))
		dst = AppendLen(dst, uint64(len(g.PEL)))
		for _, p := range g.PEL {
			dst = appendRawID(dst, p.ID)
			dst = appendMillis(dst, p.DeliveryTime)
			dst = AppendLen(dst, p.DeliveryCount)
		}
		dst = AppendLen(dst, uint64(len(g.Consumers)))
		owned := pendingByConsumer(g)
		for _, c := range g.Consumers {
			dst = AppendString(dst, c.Name)
			dst = appendMillis(dst, c.SeenTime)
			ids := owned[string(c.Name)]
			dst = AppendLen(dst, uint64(len(ids)))
			for _, i := range ids {
				dst = appendRawID(dst, g.PEL[i].ID)
			}
		}
	}
	return dst
}

// streamNodeBounds locates one encoded node: the index of its first (master)
// entry and where its listpack ends in the node buffer.
type streamNodeBounds struct{ first, end int }

// pendingByConsumer maps each consumer name to the indexes of the PEL
// entries it owns, in PEL (ascending ID) order.
func pendingByConsumer(g *StreamGroup) map[string][]int {
	if len(g.Consumers) == 0 || len(g.PEL) == 0 {
		return nil
	}
	owned := make(map[string][]int, len(g.Consumers))
	for i := range g.PEL {
		if c := g.PEL[i].Consumer; c != nil {
			owned[string(c)] = append(owned[string(c)], i)
		}
	}
	return owned
}

func appendLenID(dst []byte, id StreamID) []byte {
	dst = AppendLen(dst, id.Ms)
	return AppendLen(dst, id.Seq)
}

// appendStreamNode appends one Redis stream listpack holding the first of
// entries (at least one), as many as streamAppendItem would put in one node
// with the default limits, and returns how many. A new node starts when the
// listpack's bytes plus the next entry's field and value bytes reach
// stream-node-max-bytes, or when the node holds stream-node-max-entries.
// The node's first entry is its master entry: its ID is the node's key and
// its field names are the master fields.
func appendStreamNode(dst []byte, entries []StreamEntry) ([]byte, int) {
	master := &entries[0]
	dst, start := lpStart(dst)
	// Master entry: count, deleted, number of master fields, the fields, 0.
	// A node holds at most 100 entries, so the count is always a one-byte
	// 7-bit integer (plus its back-length) and is patched in place below.
	countAt := len(dst)
	dst = lpAppendInt(dst, 0)
	dst = lpAppendInt(dst, 0)
	dst = lpAppendInt(dst, int64(len(master.Fields)/2))
	for i := 0; i+1 < len(master.Fields); i += 2 {
		dst = lpAppendString(dst, master.Fields[i])
	}
	dst = lpAppendInt(dst, 0)
	elems := 4 + len(master.Fields)/2
	n := 0
	for i := range entries {
		e := &entries[i]
		if i > 0 {
			tot := 0
			for _, f := range e.Fields {
				tot += len(f)
			}
			lpBytes := len(dst) - start + 1 // + the terminator
			if lpBytes+tot >= streamNodeMaxBytes || i >= streamNodeMaxEntries {
				break
			}
		}
		var ne int
		dst, ne = appendStreamItem(dst, e, master.ID, master.Fields)
		elems += ne
		n++
	}
	dst[countAt] = byte(n)
	return lpFinish(dst, start, elems), n
}

// appendStreamItem encodes one entry relative to the node's master ID and
// fields: flags, ms-diff, seq-diff, then the values alone when its fields
// are the master fields (SAMEFIELDS) or the field count and the pairs
// otherwise, then lp-count. It returns how many listpack elements it wrote.
func appendStreamItem(dst []byte, e *StreamEntry, masterID StreamID, masterFields [][]byte) ([]byte, int) {
	nf := len(e.Fields) / 2
	same := sameFieldNames(e.Fields, masterFields)
	flags := int64(streamItemFlagNone)
	if same {
		flags |= streamItemFlagSameFields
	}
	dst = lpAppendInt(dst, flags)
	dst = lpAppendInt(dst, int64(e.ID.Ms-masterID.Ms))
	dst = lpAppendInt(dst, int64(e.ID.Seq-masterID.Seq))
	elems := 3
	if same {
		for i := 1; i < len(e.Fields); i += 2 {
			dst = lpAppendString(dst, e.Fields[i])
		}
		elems += nf
	} else {
		dst = lpAppendInt(dst, int64(nf))
		for i := 0; i+1 < len(e.Fields); i += 2 {
			dst = lpAppendString(dst, e.Fields[i])
			dst = lpAppendString(dst, e.Fields[i+1])
		}
		elems += 1 + 2*nf
	}
	lpCount := int64(nf + 3)
	if !same {
		lpCount += int64(nf + 1)
	}
	dst = lpAppendInt(dst, lpCount)
	return dst, elems + 1
}

// sameFieldNames reports whether fields (field, value, ...) has exactly the
// master fields, in order.
func sameFieldNames(fields, masterFields [][]byte) bool {
	if len(fields)/2 != len(masterFields)/2 {
		return false
	}
	for i := 0; i+1 < len(fields); i += 2 {
		if !bytes.Equal(fields[i], masterFields[i]) {
			return false
		}
	}
	return true
}
