package keyspace

import (
	"bytes"
	"math"

	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// A sorted set value is held one of two ways, as in Redis 7.0:
//
//   - EncListpack: o.Bytes() is a listpack of (member, score) pairs, two entries
//     each, ordered by score then member (bytewise, as memcmp). A score entry
//     is the 8 bytes of the float64, little endian. Redis stores an integral
//     score as an integer there, which turns -0 into 0: svcdb does the same
//     (zlScore normalises -0), the only observable trace of that encoding.
//   - EncSkiplist: o.Coll() is a *zskiplist: Redis' skiplist with spans (rank
//     queries in O(log n)) plus a map member → node.
//
// A listpack converts when a new member would make it longer than
// zset-max-listpack-entries or is longer than zset-max-listpack-value (Redis'
// ZSetAdd), and never converts back; ZUNIONSTORE, ZINTERSTORE and ZDIFFSTORE
// build their result whole and pick the encoding by its size, as Redis'
// zsetConvertToListpackIfNeeded.

// ---- one sorted set, either encoding ------------------------------------------

func ZSetLen(o *Object) int {
	if o.Enc == EncListpack {
		return values.ZlLen(o.Bytes())
	}
	return o.Coll().(*values.Skiplist).Len()
}

func ZSetScore(o *Object, member []byte) (float64, bool) {
	if o.Enc == EncListpack {
		off, s := values.ZlFind(o.Bytes(), member)
		return s, off >= 0
	}
	s := o.Coll().(*values.Skiplist)
	x, ok := s.Find(member)
	if !ok {
		return 0, false
	}
	return s.Score(x), true
}

// ZSetRank is member's 0-based rank from the lowest score.
func ZSetRank(o *Object, member []byte) (int, bool) {
	if o.Enc == EncListpack {
		lp := o.Bytes()
		r := 0
		for off := listpack.First; off < len(lp); r++ {
			m, _, next := values.ZlAt(lp, off)
			if bytes.Equal(m, member) {
				return r, true
			}
			off = next
		}
		return 0, false
	}
	s := o.Coll().(*values.Skiplist)
	x, ok := s.Find(member)
	if !ok {
		return 0, false
	}
	return s.Rank(x) - 1, true
}

// NewZSetValue gives o (a fresh KindZSet object) an empty value for pairs,
// ZADD's score and member arguments (scores already checked): a listpack,
// or a skiplist when even the first member would not fit one (Redis'
// zaddGenericCommand on a new key). The listpack is sized for the pairs
// that fit it, so a ZADD that creates a small sorted set allocates it once,
// at its final size, instead of growing it pair by pair (each growth left
// the old buffer as garbage, and the last one a quarter of slack).
func NewZSetValue(o *Object, pairs [][]byte, lim *EncodingLimits) {
	if lim.ZSetMaxListpackEntries == 0 || int64(len(pairs[1])) > lim.ZSetMaxListpackValue {
		o.Enc = EncSkiplist
		o.SetColl(values.NewSkiplist(0))
		return
	}
	size := 0
	for j := 0; j+1 < len(pairs) && int64(j/2) < lim.ZSetMaxListpackEntries; j += 2 {
		score, _ := values.ParseScore(pairs[j])
		size += listpack.EntrySize(pairs[j+1]) + values.ZlScoreEntrySize(score)
	}
	o.Enc = EncListpack
	o.SetBytes(listpack.New(size))
}

// zsetConvert turns a listpack into a skiplist.
func zsetConvert(o *Object) {
	lp := o.Bytes()
	s := values.NewSkiplist(values.ZlLen(lp))
	for off := listpack.First; off < len(lp); {
		m, sc, next := values.ZlAt(lp, off)
		s.AddString(string(m), sc)
		off = next
	}
	o.SetBytes(nil)
	o.SetColl(s)
	o.Enc = EncSkiplist
}

// zadd input flags and results (Redis' ZADD_IN_* and ZADD_OUT_*).
const (
	ZAddNX = 1 << iota
	ZAddXX
	ZAddGT
	ZAddLT
	ZAddIncr
)

const (
	ZAddOutNaN = 1 << iota
	ZAddOutAdded
	ZAddOutUpdated
	ZAddOutNop
)

// ZSetAdd adds member or updates its score, as Redis' ZSetAdd; it returns
// the zaddOut* flags and the member's score afterwards.
func ZSetAdd(o *Object, score float64, member []byte, flags int, lim *EncodingLimits) (out int, newScore float64) {
	if math.IsNaN(score) {
		return ZAddOutNaN, 0
	}
	if o.Enc == EncListpack {
		off, cur := values.ZlFind(o.Bytes(), member)
		if off >= 0 {
			if flags&ZAddNX != 0 {
				return ZAddOutNop, cur
			}
			if flags&ZAddIncr != 0 {
				score += cur
				if math.IsNaN(score) {
					return ZAddOutNaN, 0
				}
			}
			if flags&ZAddLT != 0 && score >= cur || flags&ZAddGT != 0 && score <= cur {
				return ZAddOutNop, cur
			}
			if score != cur {
				o.SetBytes(values.ZlDelete(o.Bytes(), off))
				o.SetBytes(values.ZlInsert(o.Bytes(), member, score))
				return ZAddOutUpdated, score
			}
			return 0, score
		}
		if flags&ZAddXX != 0 {
			return ZAddOutNop, 0
		}
		if int64(values.ZlLen(o.Bytes()))+1 > lim.ZSetMaxListpackEntries || int64(len(member)) > lim.ZSetMaxListpackValue {
			zsetConvert(o)
		} else {
			o.SetBytes(values.ZlInsert(o.Bytes(), member, score))
			return ZAddOutAdded, score // Redis replies the score given, even -0
		}
	}
	s := o.Coll().(*values.Skiplist)
	if x, ok := s.Find(member); ok {
		if flags&ZAddNX != 0 {
			return ZAddOutNop, s.Score(x)
		}
		cur := s.Score(x)
		if flags&ZAddIncr != 0 {
			score += cur
			if math.IsNaN(score) {
				return ZAddOutNaN, 0
			}
		}
		if flags&ZAddLT != 0 && score >= cur || flags&ZAddGT != 0 && score <= cur {
			return ZAddOutNop, cur
		}
		if score != cur {
			s.SetScore(x, score)
			return ZAddOutUpdated, score
		}
		return 0, score
	}
	if flags&ZAddXX != 0 {
		return ZAddOutNop, 0
	}
	s.Add(member, score)
	return ZAddOutAdded, score
}

// ZSetDel removes member and reports whether it was there.
func ZSetDel(o *Object, member []byte) bool {
	if o.Enc == EncListpack {
		off, _ := values.ZlFind(o.Bytes(), member)
		if off < 0 {
			return false
		}
		o.SetBytes(values.ZlDelete(o.Bytes(), off))
		return true
	}
	return o.Coll().(*values.Skiplist).Remove(member)
}

// ZView returns a cursor (not yet placed) over o. buf provides the storage
// for a listpack's offsets so small sets need no allocation.
func ZView(o *Object, buf []int) values.ZCursor {
	if o.Enc == EncListpack {
		return values.ZCursor{Lp: o.Bytes(), Offs: values.ZlOffsets(o.Bytes(), buf[:0]), I: -1}
	}
	return values.ZCursor{Sl: o.Coll().(*values.Skiplist)}
}
