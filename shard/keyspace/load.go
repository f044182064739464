package keyspace

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/rdb"
	"github.com/svcdb/svcdb/shard/values"
)

// Loading an RDB file at start-up (LoadRDB).
//
// Package rdb decodes the file into neutral entries; each goes to the shard
// that owns its key, gathered per shard and inserted loadBatchKeys at a time
// while holding that shard's token (the expiry loop may already run). Each
// value is built with the type's own constructors and mutators, choosing
// the encoding Redis 7.0's rdbLoadObject would choose under the thresholds
// in effect (EncodingLimits): a listpack hash while it has at most
// hash-max-listpack-entries fields none longer than hash-max-listpack-value,
// an intset while every member is an integer and there are at most
// set-max-intset-entries, a listpack sorted set while it has at most
// zset-max-listpack-entries members none longer than zset-max-listpack-value,
// lists through the same push path as RPUSH, streams through the same append
// path as XADD. Memory is accounted as the handlers account it (insert,
// SetString/SetInt, ValueChanged). Loading is not a change: it leaves
// Dirty where it was.

// LoadBatchKeys is how many keys LoadRDB gathers for one shard before it
// takes that shard and inserts them.
const LoadBatchKeys = 512

// loadEntry builds e's value and inserts it into d. An empty list, set,
// sorted set or hash is skipped (added false), as Redis skips empty keys.
func loadEntry(d *DB, e *rdb.Entry, lim *EncodingLimits) (added bool, err error) {
	if o, _ := d.Find(e.Key); o != nil {
		return false, fmt.Errorf("RDB has duplicated key '%s' in DB %d", e.Key, e.DB)
	}
	if len(e.Elems) == 0 && len(e.Pairs) == 0 && len(e.ZSet) == 0 &&
		(e.Kind == KindList || e.Kind == KindSet || e.Kind == KindHash || e.Kind == KindZSet) {
		return false, nil
	}
	v, err := buildValue(e, lim)
	if err != nil {
		return false, fmt.Errorf("rdb: key '%s' in DB %d: %w", e.Key, e.DB, err)
	}
	o := d.insertBuilt(e.Key, &v, e)
	d.SetExpire(o, e.ExpireAt)
	return true, nil
}

// RestoreValue is a value RESTORE decoded and built, ready to be inserted
// once the handler has decided to (BUSYKEY, REPLACE): building it first
// means a payload that fails to build leaves the old key in place.
type RestoreValue struct {
	v Object
	e *rdb.Entry
}

// BuildRestoreValue builds e's value as loading a snapshot would, under the
// thresholds in effect (the encodings Redis' rdbLoadObject would choose).
// REQUIRES: e is not an empty collection (rdb.ParseDumpValue refuses them).
func BuildRestoreValue(e *rdb.Entry, lim *EncodingLimits) (*RestoreValue, error) {
	v, err := buildValue(e, lim)
	if err != nil {
		return nil, err
	}
	return &RestoreValue{v: v, e: e}, nil
}

// InsertRestored inserts rv under key, with no expiry, publishes the new
// event (Redis' dbAdd) and returns the object.
// REQUIRES: key is not in d.
func (d *DB) InsertRestored(key []byte, rv *RestoreValue) *Object {
	o := d.insertBuilt(key, &rv.v, rv.e)
	d.notifyKey(NotifyNew, "new", o.Key())
	return o
}

// SetAccessHint is Redis' objectSetLRUOrLFU for RESTORE's IDLETIME and FREQ
// (and their opcodes in a payload): under an LFU policy a FREQ >= 0 becomes
// the counter, stamped now; under an LRU policy an IDLETIME >= 0 (seconds)
// dates the last access that long ago, wrapping as the LRU clock does.
// A negative value means "not given" and changes nothing.
func (d *DB) SetAccessHint(o *Object, lfuFreq, lruIdleSeconds int64) {
	if d.evict.loadPolicy()&policyLFU != 0 {
		if lfuFreq >= 0 {
			o.Access = d.evict.minutes.Load()<<8 | uint32(min(lfuFreq, 255))
		}
		return
	}
	if lruIdleSeconds < 0 {
		return
	}
	abs := int64(d.evict.lruClock()) - lruIdleSeconds*1000/lruClockResolution
	if abs < 0 {
		abs += lruClockMax
	}
	o.Access = uint32(abs) & lruClockMax // the 24-bit lru field of a robj
}

// buildValue builds e's collection value (Kind, Enc, Str, Coll); a string's
// bytes stay in e (insertBuilt sets them).
func buildValue(e *rdb.Entry, lim *EncodingLimits) (Object, error) {
	var v Object // the value, built before the key exists
	switch e.Kind {
	case KindString:
		v.Kind = KindString
	case KindList:
		v.Kind = KindList
		loadList(&v, e.Elems, lim)
	case KindSet:
		v.Kind = KindSet
		loadSet(&v, e.Elems, lim)
	case KindZSet:
		v.Kind = KindZSet
		loadZSet(&v, e.ZSet, lim)
	case KindHash:
		v.Kind = KindHash
		loadHash(&v, e.Pairs, lim)
	case KindStream:
		s, err := loadStream(e.Stream, lim)
		if err != nil {
			return v, fmt.Errorf("stream: %w", err)
		}
		v.Kind = KindStream
		v.Enc = EncStream
		v.SetColl(s)
	default:
		return v, fmt.Errorf("unknown kind %d", e.Kind)
	}
	return v, nil
}

// insertBuilt inserts key holding v (built by buildValue from e), memory
// accounted as the handlers account it.
func (d *DB) insertBuilt(key []byte, v *Object, e *rdb.Entry) *Object {
	if v.Kind == KindString {
		if n, ok := resp.ParseInt(e.Str); ok {
			o := d.insert(key, v.Kind)
			d.SetInt(o, n) // Redis' tryObjectEncoding: OBJ_ENCODING_INT
			return o
		}
		return d.insertString(key, e.Str)
	}
	o := d.insert(key, v.Kind)
	MoveValue(o, v)
	d.ValueChanged(o, 0)
	return o
}

// loadList pushes elems at the tail, as RPUSH would, so the list takes the
// layout RPUSH gives it under list-max-listpack-size.
func loadList(v *Object, elems [][]byte, lim *EncodingLimits) {
	size := 0
	for _, el := range elems[:min(len(elems), values.ListpackMaxEntries)] {
		size += listpack.EntrySize(el)
	}
	v.Enc = EncListpack
	v.SetBytes(listpack.New(size))
	for _, el := range elems {
		ListPush(v, el, false, lim)
	}
}

// loadSet is rdbLoadObject's RDB_TYPE_SET: a hash table from the start when
// there are more members than set-max-intset-entries and
// set-max-listpack-entries, else the value SADD of them all would build (an
// intset, or a listpack, converting as members are added).
// REQUIRES: members is not empty.
func loadSet(v *Object, members [][]byte, lim *EncodingLimits) {
	if n := int64(len(members)); n > lim.SetMaxIntsetEntries && n > lim.SetMaxListpackEntries {
		v.Enc = EncHashtable
		v.SetColl(values.NewHTable(false, len(members)))
	} else {
		NewSetValue(v, members, lim)
	}
	for _, m := range members {
		SetAdd(v, m, lim)
	}
}

// loadZSet is rdbLoadObject's RDB_TYPE_ZSET_2: loaded whole, then a
// listpack when it has at most zset-max-listpack-entries members and none
// longer than zset-max-listpack-value, else a skiplist. It sorts members in
// place.
func loadZSet(v *Object, members []rdb.ZMember, lim *EncodingLimits) {
	maxLen := 0
	for i := range members {
		maxLen = max(maxLen, len(members[i].Member))
	}
	if int64(len(members)) > lim.ZSetMaxListpackEntries || int64(maxLen) > lim.ZSetMaxListpackValue {
		sl := values.NewSkiplist(len(members))
		for i := range members {
			if _, dup := sl.Find(members[i].Member); !dup {
				sl.Add(members[i].Member, members[i].Score)
			}
		}
		v.Enc = EncSkiplist
		v.SetColl(sl)
		return
	}
	slices.SortFunc(members, func(a, b rdb.ZMember) int {
		if c := cmp.Compare(a.Score, b.Score); c != 0 {
			return c
		}
		return bytes.Compare(a.Member, b.Member)
	})
	size := 0
	for i := range members {
		size += listpack.EntrySize(members[i].Member) + values.ZlScoreEntrySize(members[i].Score)
	}
	lp := listpack.New(size)
	var sb [values.ZlScoreLen]byte
	for i := range members {
		lp = listpack.Append(lp, members[i].Member)
		lp = listpack.Append(lp, values.ZlScoreBytes(&sb, members[i].Score))
	}
	v.Enc = EncListpack
	v.SetBytes(lp)
}

// loadHash is rdbLoadObject's RDB_TYPE_HASH: a hash table from the start
// when there are more fields than hash-max-listpack-entries or one field or
// value is longer than hash-max-listpack-value, else a listpack of the
// pairs in file order. Package rdb guarantees no field repeats.
func loadHash(v *Object, pairs [][]byte, lim *EncodingLimits) {
	n := len(pairs) / 2
	if int64(n) > lim.HashMaxListpackEntries {
		v.Enc = EncHashtable
		v.SetColl(values.NewHTable(true, n))
	} else {
		NewHashValue(v, pairs, lim)
	}
	if v.Enc == EncListpack {
		for _, x := range pairs {
			v.SetBytes(listpack.Append(v.Bytes(), x))
		}
		return
	}
	t := v.Coll().(*values.HTable)
	for i := 0; i+1 < len(pairs); i += 2 {
		if _, dup := t.Find(pairs[i]); !dup {
			t.Insert(pairs[i], pairs[i+1])
		}
	}
}

// loadStream rebuilds a stream: its entries appended as XADD appends them
// (nodes split under stream-node-max-entries), then the file's last ID,
// max deleted ID and entries-added counter, then the consumer groups with
// their consumers (seen time) and pending entries (delivery time and count,
// owning consumer).
func loadStream(src *rdb.Stream, lim *EncodingLimits) (*values.Stream, error) {
	s := values.NewStream()
	for i := range src.Entries {
		en := &src.Entries[i]
		id := values.StreamID{Ms: en.ID.Ms, Seq: en.ID.Seq}
		if s.Length > 0 && !s.LastID.Less(id) {
			return nil, fmt.Errorf("entry %d-%d is not above the one before it", id.Ms, id.Seq)
		}
		s.Append(id, en.Fields, lim.StreamNodeMaxEntries)
	}
	if last := (values.StreamID{Ms: src.LastID.Ms, Seq: src.LastID.Seq}); s.LastID.Less(last) {
		s.LastID = last
	}
	s.MaxDeleted = values.StreamID{Ms: src.MaxDeletedID.Ms, Seq: src.MaxDeletedID.Seq}
	s.EntriesAdded = max(int64(src.EntriesAdded), s.Length)
	for gi := range src.Groups {
		sg := &src.Groups[gi]
		g := s.CreateGroup(sg.Name, values.StreamID{Ms: sg.LastID.Ms, Seq: sg.LastID.Seq}, sg.EntriesRead)
		if g == nil {
			return nil, fmt.Errorf("duplicated consumer group name '%s'", sg.Name)
		}
		for ci := range sg.Consumers {
			sc := &sg.Consumers[ci]
			if s.CreateConsumer(g, sc.Name, sc.SeenTime) == nil {
				return nil, fmt.Errorf("group '%s': duplicated consumer name '%s'", sg.Name, sc.Name)
			}
		}
		for pi := range sg.PEL {
			p := &sg.PEL[pi]
			id := values.StreamID{Ms: p.ID.Ms, Seq: p.ID.Seq}
			c := g.Consumer(p.Consumer)
			if c == nil {
				return nil, fmt.Errorf("group '%s': pending entry %d-%d has no consumer", sg.Name, id.Ms, id.Seq)
			}
			if g.Pel.Get(id) != nil {
				return nil, fmt.Errorf("group '%s': pending entry %d-%d appears twice", sg.Name, id.Ms, id.Seq)
			}
			n := &values.StreamNACK{DeliveryTime: p.DeliveryTime, DeliveryCount: int64(p.DeliveryCount), Consumer: c}
			g.Pel.Insert(id, n, &s.Mem)
			c.Pel.Insert(id, n, &s.Mem)
			s.Mem += values.StreamNACKSize
		}
	}
	return s, nil
}

// Load inserts entries (an RDB file's, each of this store's shard) and
// returns how many it inserted before an error. Loading is not a change:
// the change counter stays.
// REQUIRES: the caller holds the store's shard.
func (st *Store) Load(entries []rdb.Entry, lim *EncodingLimits) (int, error) {
	dirty := st.dirty
	var err error
	done := 0
	for k := range entries {
		var added bool
		if added, err = loadEntry(st.dbs[entries[k].DB], &entries[k], lim); err != nil {
			break
		}
		if added {
			done++
		}
	}
	st.dirty = dirty
	st.dirtyPub.Store(dirty)
	return done, err
}
