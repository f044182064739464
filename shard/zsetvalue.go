package shard

import (
	"bytes"
	"math"

	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// A sorted set value is held one of two ways, as in Redis 7.0:
//
//   - encListpack: o.str is a listpack of (member, score) pairs, two entries
//     each, ordered by score then member (bytewise, as memcmp). A score entry
//     is the 8 bytes of the float64, little endian. Redis stores an integral
//     score as an integer there, which turns -0 into 0: svcdb does the same
//     (zlScore normalises -0), the only observable trace of that encoding.
//   - encSkiplist: o.coll is a *zskiplist: Redis' skiplist with spans (rank
//     queries in O(log n)) plus a map member → node.
//
// A listpack converts when a new member would make it longer than
// zset-max-listpack-entries or is longer than zset-max-listpack-value (Redis'
// zsetAdd), and never converts back; ZUNIONSTORE, ZINTERSTORE and ZDIFFSTORE
// build their result whole and pick the encoding by its size, as Redis'
// zsetConvertToListpackIfNeeded.

// ---- one sorted set, either encoding ------------------------------------------

func zsetLen(o *object) int {
	if o.enc == encListpack {
		return values.ZlLen(o.str)
	}
	return o.coll.(*values.Skiplist).Len()
}

func zsetScore(o *object, member []byte) (float64, bool) {
	if o.enc == encListpack {
		off, s := values.ZlFind(o.str, member)
		return s, off >= 0
	}
	s := o.coll.(*values.Skiplist)
	x, ok := s.Find(member)
	if !ok {
		return 0, false
	}
	return s.Score(x), true
}

// zsetRank is member's 0-based rank from the lowest score.
func zsetRank(o *object, member []byte) (int, bool) {
	if o.enc == encListpack {
		lp := o.str
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
	s := o.coll.(*values.Skiplist)
	x, ok := s.Find(member)
	if !ok {
		return 0, false
	}
	return s.Rank(x) - 1, true
}

// newZSetValue gives o (a fresh KindZSet object) an empty value: a listpack,
// or a skiplist when even one member of firstLen bytes would not fit one
// (Redis' zaddGenericCommand on a new key).
func newZSetValue(o *object, firstLen int, lim *EncodingLimits) {
	if lim.ZSetMaxListpackEntries == 0 || int64(firstLen) > lim.ZSetMaxListpackValue {
		o.enc = encSkiplist
		o.coll = values.NewSkiplist(0)
		return
	}
	o.enc = encListpack
	o.str = listpack.New(firstLen + 16)
}

// zsetConvert turns a listpack into a skiplist.
func zsetConvert(o *object) {
	lp := o.str
	s := values.NewSkiplist(values.ZlLen(lp))
	for off := listpack.First; off < len(lp); {
		m, sc, next := values.ZlAt(lp, off)
		s.AddString(string(m), sc)
		off = next
	}
	o.str, o.coll, o.enc = nil, s, encSkiplist
}

// zadd input flags and results (Redis' ZADD_IN_* and ZADD_OUT_*).
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddIncr
)

const (
	zaddOutNaN = 1 << iota
	zaddOutAdded
	zaddOutUpdated
	zaddOutNop
)

// zsetAdd adds member or updates its score, as Redis' zsetAdd; it returns
// the zaddOut* flags and the member's score afterwards.
func zsetAdd(o *object, score float64, member []byte, flags int, lim *EncodingLimits) (out int, newScore float64) {
	if math.IsNaN(score) {
		return zaddOutNaN, 0
	}
	if o.enc == encListpack {
		off, cur := values.ZlFind(o.str, member)
		if off >= 0 {
			if flags&zaddNX != 0 {
				return zaddOutNop, cur
			}
			if flags&zaddIncr != 0 {
				score += cur
				if math.IsNaN(score) {
					return zaddOutNaN, 0
				}
			}
			if flags&zaddLT != 0 && score >= cur || flags&zaddGT != 0 && score <= cur {
				return zaddOutNop, cur
			}
			if score != cur {
				o.str = values.ZlDelete(o.str, off)
				o.str = values.ZlInsert(o.str, member, score)
				return zaddOutUpdated, score
			}
			return 0, score
		}
		if flags&zaddXX != 0 {
			return zaddOutNop, 0
		}
		if int64(values.ZlLen(o.str))+1 > lim.ZSetMaxListpackEntries || int64(len(member)) > lim.ZSetMaxListpackValue {
			zsetConvert(o)
		} else {
			o.str = values.ZlInsert(o.str, member, score)
			return zaddOutAdded, score // Redis replies the score given, even -0
		}
	}
	s := o.coll.(*values.Skiplist)
	if x, ok := s.Find(member); ok {
		if flags&zaddNX != 0 {
			return zaddOutNop, s.Score(x)
		}
		cur := s.Score(x)
		if flags&zaddIncr != 0 {
			score += cur
			if math.IsNaN(score) {
				return zaddOutNaN, 0
			}
		}
		if flags&zaddLT != 0 && score >= cur || flags&zaddGT != 0 && score <= cur {
			return zaddOutNop, cur
		}
		if score != cur {
			s.SetScore(x, score)
			return zaddOutUpdated, score
		}
		return 0, score
	}
	if flags&zaddXX != 0 {
		return zaddOutNop, 0
	}
	s.Add(member, score)
	return zaddOutAdded, score
}

// zsetDel removes member and reports whether it was there.
func zsetDel(o *object, member []byte) bool {
	if o.enc == encListpack {
		off, _ := values.ZlFind(o.str, member)
		if off < 0 {
			return false
		}
		o.str = values.ZlDelete(o.str, off)
		return true
	}
	return o.coll.(*values.Skiplist).Remove(member)
}

// zview returns a cursor (not yet placed) over o. buf provides the storage
// for a listpack's offsets so small sets need no allocation.
func zview(o *object, buf []int) values.ZCursor {
	if o.enc == encListpack {
		return values.ZCursor{Lp: o.str, Offs: values.ZlOffsets(o.str, buf[:0]), I: -1}
	}
	return values.ZCursor{Sl: o.coll.(*values.Skiplist)}
}
