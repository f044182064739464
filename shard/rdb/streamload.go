package rdb

import (
	"encoding/binary"
	"math"
	"slices"
)

// loadStream reads a TypeStreamListpacks or TypeStreamListpacks2 value as
// Redis 7.0's rdbLoadObject does, validating every node listpack in full.
func (d *decoder) loadStream(typ byte) (*Stream, error) {
	s := &Stream{}
	nodes, err := d.readElemCount()
	if err != nil {
		return nil, err
	}
	var prev StreamID
	for i := uint64(0); i < nodes; i++ {
		keyOff := d.offset()
		key, err := d.readString()
		if err != nil {
			return nil, err
		}
		if len(key) != 16 {
			return nil, d.errorf(keyOff, "stream node key entry is not the size of a stream ID (%d bytes)", len(key))
		}
		master := StreamID{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
		lpOff := d.offset()
		lp, err := d.readString()
		if err != nil {
			return nil, err
		}
		if s.Entries, err = d.streamNode(lpOff, lp, master, s.Entries); err != nil {
			return nil, err
		}
		// Nodes ascend by master ID and the entries by ID across nodes.
		if i > 0 && !prev.Less(master) {
			return nil, d.errorf(keyOff, "stream node %d-%d does not follow node %d-%d", master.Ms, master.Seq, prev.Ms, prev.Seq)
		}
		prev = master
	}
	for i := 1; i < len(s.Entries); i++ {
		if !s.Entries[i-1].ID.Less(s.Entries[i].ID) {
			id := s.Entries[i].ID
			return nil, d.errorf(d.offset(), "stream entry IDs not ascending at %d-%d", id.Ms, id.Seq)
		}
	}
	metaOff := d.offset()
	fields := []*uint64{&s.Length, &s.LastID.Ms, &s.LastID.Seq}
	if typ == TypeStreamListpacks2 {
		fields = append(fields, &s.FirstID.Ms, &s.FirstID.Seq,
			&s.MaxDeletedID.Ms, &s.MaxDeletedID.Seq, &s.EntriesAdded)
	}
	for _, f := range fields {
		if *f, err = d.readCount(); err != nil {
			return nil, err
		}
	}
	if typ == TypeStreamListpacks {
		// As Redis: the entries added so far are taken to be the length,
		// and the first ID is the first live entry's (or the largest ID
		// when there is none, as streamGetEdgeID).
		s.EntriesAdded = s.Length
		s.FirstID = StreamID{math.MaxUint64, math.MaxUint64}
		if len(s.Entries) > 0 {
			s.FirstID = s.Entries[0].ID
		}
	}
	if s.Length != uint64(len(s.Entries)) {
		return nil, d.errorf(metaOff, "stream length %d inconsistent with its %d live entries", s.Length, len(s.Entries))
	}
	if n := len(s.Entries); n > 0 && s.LastID.Less(s.Entries[n-1].ID) {
		id := s.Entries[n-1].ID
		return nil, d.errorf(metaOff, "stream last ID %d-%d is smaller than its last entry %d-%d", s.LastID.Ms, s.LastID.Seq, id.Ms, id.Seq)
	}

	groups, err := d.readElemCount()
	if err != nil {
		return nil, err
	}
	for i := uint64(0); i < groups; i++ {
		gOff := d.offset()
		g, err := d.loadStreamGroup(typ, s)
		if err != nil {
			return nil, err
		}
		for _, o := range s.Groups {
			if string(o.Name) == string(g.Name) {
				return nil, d.errorf(gOff, "duplicated consumer group name %q", clip(g.Name))
			}
		}
		s.Groups = append(s.Groups, g)
	}
	return s, nil
}

// loadStreamGroup reads one consumer group: name, last ID, entries read
// (version 2; estimated for version 1 as Redis does), the group PEL, then
// the consumers with the IDs of the PEL entries they own.
func (d *decoder) loadStreamGroup(typ byte, s *Stream) (StreamGroup, error) {
	var g StreamGroup
	var err error
	if g.Name, err = d.readString(); err != nil {
		return g, err
	}
	if g.LastID.Ms, err = d.readCount(); err != nil {
		return g, err
	}
	if g.LastID.Seq, err = d.readCount(); err != nil {
		return g, err
	}
	if typ == TypeStreamListpacks2 {
		n, err := d.readCount()
		if err != nil {
			return g, err
		}
		g.EntriesRead = int64(n) // UINT64_MAX is SCG_INVALID_ENTRIES_READ, -1
	} else {
		g.EntriesRead = estimateEntriesRead(s, g.LastID)
	}
	pelOff := d.offset()
	n, err := d.readElemCount()
	if err != nil {
		return g, err
	}
	g.PEL = make([]StreamPending, 0, capHint(n))
	sorted := true
	for i := uint64(0); i < n; i++ {
		raw, err := d.readFixed(16)
		if err != nil {
			return g, err
		}
		p := StreamPending{ID: StreamID{binary.BigEndian.Uint64(raw), binary.BigEndian.Uint64(raw[8:])}}
		if p.DeliveryTime, err = d.readMillis(); err != nil {
			return g, err
		}
		if p.DeliveryCount, err = d.readCount(); err != nil {
			return g, err
		}
		if k := len(g.PEL); k > 0 && !g.PEL[k-1].ID.Less(p.ID) {
			sorted = false
		}
		g.PEL = append(g.PEL, p)
	}
	if !sorted {
		slices.SortFunc(g.PEL, func(a, b StreamPending) int { return compareID(a.ID, b.ID) })
		for i := 1; i < len(g.PEL); i++ {
			if g.PEL[i-1].ID == g.PEL[i].ID {
				return g, d.errorf(pelOff, "duplicated global PEL entry %d-%d loading stream consumer group", g.PEL[i].ID.Ms, g.PEL[i].ID.Seq)
			}
		}
	}
	nc, err := d.readElemCount()
	if err != nil {
		return g, err
	}
	g.Consumers = make([]StreamConsumer, 0, capHint(nc))
	var names map[string]struct{}
	for i := uint64(0); i < nc; i++ {
		cOff := d.offset()
		var c StreamConsumer
		if c.Name, err = d.readString(); err != nil {
			return g, err
		}
		if names == nil {
			names = map[string]struct{}{}
		}
		if _, dup := names[string(c.Name)]; dup {
			return g, d.errorf(cOff, "duplicate stream consumer detected: %q", clip(c.Name))
		}
		names[string(c.Name)] = struct{}{}
		if c.SeenTime, err = d.readMillis(); err != nil {
			return g, err
		}
		owned, err := d.readElemCount()
		if err != nil {
			return g, err
		}
		for j := uint64(0); j < owned; j++ {
			idOff := d.offset()
			raw, err := d.readFixed(16)
			if err != nil {
				return g, err
			}
			id := StreamID{binary.BigEndian.Uint64(raw), binary.BigEndian.Uint64(raw[8:])}
			k, found := slices.BinarySearchFunc(g.PEL, id, func(p StreamPending, id StreamID) int { return compareID(p.ID, id) })
			if !found {
				return g, d.errorf(idOff, "consumer entry %d-%d not found in group global PEL", id.Ms, id.Seq)
			}
			if g.PEL[k].Consumer != nil {
				return g, d.errorf(idOff, "duplicated consumer PEL entry %d-%d loading a stream consumer group", id.Ms, id.Seq)
			}
			g.PEL[k].Consumer = c.Name
		}
		g.Consumers = append(g.Consumers, c)
	}
	return g, nil
}

func compareID(a, b StreamID) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}

// estimateEntriesRead is Redis' streamEstimateDistanceFromFirstEverEntry,
// used for groups in version 1 stream files, which do not store it.
func estimateEntriesRead(s *Stream, id StreamID) int64 {
	if s.EntriesAdded == 0 {
		return 0
	}
	if s.Length == 0 && compareID(id, s.LastID) < 1 {
		return int64(s.EntriesAdded)
	}
	switch cmp := compareID(id, s.LastID); {
	case cmp == 0:
		return int64(s.EntriesAdded)
	case cmp > 0:
		return -1
	}
	cmpFirst := compareID(id, s.FirstID)
	if s.MaxDeletedID == (StreamID{}) || s.MaxDeletedID.Less(s.FirstID) {
		switch {
		case cmpFirst < 0:
			return int64(s.EntriesAdded - s.Length)
		case cmpFirst == 0:
			return int64(s.EntriesAdded - s.Length + 1)
		}
	}
	return -1
}

// streamNode validates one stream node listpack (streamValidateListpackIntegrity
// in deep mode) and appends its live entries to dst.
func (d *decoder) streamNode(off int64, lp []byte, master StreamID, dst []StreamEntry) ([]StreamEntry, error) {
	if _, err := validateListpack(lp); err != nil {
		return nil, d.errorf(off, "stream listpack integrity check failed: %v", err)
	}
	it := streamIter{d: d, lp: lp, p: lpHeaderSize}
	if it.done() {
		return nil, d.errorf(off, "empty listpack inside stream")
	}
	count, ok1 := it.int()
	deleted, ok2 := it.int()
	nmf, ok3 := it.int()
	if !ok1 || !ok2 || !ok3 || count < 0 || deleted < 0 || nmf < 0 || nmf > int64(len(lp)) {
		return nil, d.errorf(off, "stream listpack integrity check failed: bad master entry")
	}
	masterFields := make([][]byte, nmf)
	for i := range masterFields {
		f, ok := it.str()
		if !ok {
			return nil, d.errorf(off, "stream listpack integrity check failed: master fields truncated")
		}
		masterFields[i] = f
	}
	if z, ok := it.int(); !ok || z != 0 {
		return nil, d.errorf(off, "stream listpack integrity check failed: master entry not terminated by 0")
	}
	var live, dead int64
	for !it.done() {
		flags, ok1 := it.int()
		msd, ok2 := it.int()
		seqd, ok3 := it.int()
		if !ok1 || !ok2 || !ok3 {
			return nil, d.errorf(off, "stream listpack integrity check failed: bad entry header")
		}
		e := StreamEntry{ID: StreamID{master.Ms + uint64(msd), master.Seq + uint64(seqd)}}
		var lpCount int64
		if flags&streamItemFlagSameFields != 0 {
			e.Fields = make([][]byte, 0, 2*nmf)
			for _, f := range masterFields {
				v, ok := it.str()
				if !ok {
					return nil, d.errorf(off, "stream listpack integrity check failed: entry values truncated")
				}
				e.Fields = append(e.Fields, f, v)
			}
			lpCount = nmf + 3
		} else {
			nf, ok := it.int()
			if !ok || nf < 0 || nf > int64(len(lp)) {
				return nil, d.errorf(off, "stream listpack integrity check failed: bad field count")
			}
			e.Fields = make([][]byte, 0, 2*nf)
			for range 2 * nf {
				v, ok := it.str()
				if !ok {
					return nil, d.errorf(off, "stream listpack integrity check failed: entry fields truncated")
				}
				e.Fields = append(e.Fields, v)
			}
			lpCount = 2*nf + 4
		}
		if c, ok := it.int(); !ok || c != lpCount {
			return nil, d.errorf(off, "stream listpack integrity check failed: wrong lp-count")
		}
		if flags&streamItemFlagDeleted != 0 {
			dead++
			continue
		}
		live++
		dst = append(dst, e)
	}
	if live != count || dead != deleted {
		return nil, d.errorf(off, "stream listpack integrity check failed: master entry says %d live and %d deleted, found %d and %d", count, deleted, live, dead)
	}
	if live+dead == 0 {
		return nil, d.errorf(off, "stream listpack integrity check failed: node without entries")
	}
	return dst, nil
}

// streamIter walks the elements of a validated listpack.
type streamIter struct {
	d  *decoder
	lp []byte
	p  int
}

func (it *streamIter) done() bool { return it.p >= len(it.lp)-1 }

// int returns the next element as an integer (a string element must be a
// decimal integer, as lpGetInteger requires).
func (it *streamIter) int() (int64, bool) {
	if it.done() {
		return 0, false
	}
	s, v, isInt, next := lpNext(it.lp, it.p)
	it.p = next
	if isInt {
		return v, true
	}
	return parseCanonicalInt(s)
}

// str returns the next element as bytes.
func (it *streamIter) str() ([]byte, bool) {
	if it.done() {
		return nil, false
	}
	s, v, isInt, next := lpNext(it.lp, it.p)
	it.p = next
	return it.d.elem(s, v, isInt), true
}
