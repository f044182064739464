package keyspace

import (
	"slices"

	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// A list lives in one of two encodings:
//
//   - EncListpack: o.Bytes() is one listpack (package listpack) holding every
//     element in order. Small lists stay here: one flat buffer, no pointers.
//   - EncQuicklist: o.Coll() is a *quicklist, a sequence of nodes each holding a
//     run of elements up to the node limit (list-max-listpack-size). O(1)
//     push and pop at both ends, O(n/node) index.
//
// A list converts from the first to the second when a write would take the
// listpack past the node limit or past listpackMaxEntries entries, and never
// back. Both report "quicklist" to OBJECT ENCODING, as Redis 7.0 (whose lists
// are always quicklists), so where the switch happens is not observable.

// ---- the list as handlers see it ------------------------------------------------

// ListLen is the number of elements of list o.
func ListLen(o *Object) int {
	if o.Enc == EncQuicklist {
		return o.Coll().(*values.Quicklist).Len()
	}
	return listpack.Len(o.Bytes())
}

// listToQuicklist converts o from a listpack to a quicklist, filling nodes
// up to the node limit, each sized to what it holds plus some slack at both
// ends, compressed under list-compress-depth as it is now (the quicklist
// keeps that depth, as a Redis quicklist keeps the one it was created with).
func listToQuicklist(o *Object, lim *EncodingLimits) *values.Quicklist {
	q := values.QuicklistFromListpack(o.Bytes(), lim.ListMaxListpackSize, int(lim.ListCompressDepth))
	o.SetBytes(nil)
	o.SetColl(q)
	o.Enc = EncQuicklist
	return q
}

// ListPush adds v at the front or back of o, converting o to a quicklist
// when its listpack is full.
func ListPush(o *Object, v []byte, front bool, lim *EncodingLimits) {
	fill := lim.ListMaxListpackSize
	if o.Enc == EncQuicklist {
		o.Coll().(*values.Quicklist).Push(v, front, fill)
		return
	}
	if !values.ListpackFits(o.Bytes(), values.NodeEntrySize(len(v)), fill) {
		listToQuicklist(o, lim).Push(v, front, fill)
		return
	}
	if front && len(o.Bytes()) > listpack.First {
		o.SetBytes(listpack.Insert(o.Bytes(), listpack.First, v))
	} else {
		o.SetBytes(listpack.Append(o.Bytes(), v))
	}
}

// maxReservedListpack bounds what ListPushMany reserves for a new list: the
// default list-max-listpack-size (-2) is 8 KiB a node.
const maxReservedListpack = 8 << 10

// ListPushMany adds vs one after the other at the front or back of o, as
// that many ListPush calls would; a quicklist takes them in bulk
// (values.Quicklist.PushMany: each entry written once, each node made at
// its final size).
func ListPushMany(o *Object, vs [][]byte, front bool, lim *EncodingLimits) {
	if o.Enc == EncListpack && len(o.Bytes()) < listpack.First && len(vs) > 1 {
		// A new list made at its final size, as ZADD and HSET make theirs:
		// growing it entry by entry left 2 garbage buffers a key (48 B for
		// RPUSH of 3 short elements), which the process' RSS holds until
		// a collection (docs/performance.md, "Memory accounting").
		size := 0
		for _, v := range vs {
			size += listpack.EntrySize(v)
		}
		if size <= maxReservedListpack {
			o.SetBytes(listpack.New(size))
		}
	}
	for i, v := range vs {
		if o.Enc == EncQuicklist {
			o.Coll().(*values.Quicklist).PushMany(vs[i:], front, lim.ListMaxListpackSize)
			return
		}
		ListPush(o, v, front, lim)
	}
}

// ListEnd returns o's first (front) or last element. The bytes are valid
// until o changes. REQUIRES: o is not empty.
func ListEnd(o *Object, front bool) []byte {
	if o.Enc == EncQuicklist {
		return o.Coll().(*values.Quicklist).End(front)
	}
	off := listpack.First
	if !front {
		off = values.ListpackLastOffset(o.Bytes())
	}
	v, _ := listpack.Next(o.Bytes(), off)
	return v
}

// ListDelEnds removes the first k (front) or last k elements of o.
// REQUIRES: k <= ListLen(o).
func ListDelEnds(o *Object, k int, front bool) {
	if k == 0 {
		return
	}
	if o.Enc == EncQuicklist {
		q := o.Coll().(*values.Quicklist)
		if front {
			q.DelFront(k)
		} else {
			q.DelBack(k)
		}
		return
	}
	if front {
		o.SetBytes(listpack.Delete(o.Bytes(), listpack.First, k))
		return
	}
	n := listpack.Len(o.Bytes())
	o.SetBytes(listpack.Delete(o.Bytes(), values.ListpackSkip(o.Bytes(), listpack.First, n-k), k))
}

// ListIterAt returns an iterator whose first element is element start
// (0 <= start < ListLen(o)).
func ListIterAt(o *Object, start int, back bool) values.ListIter {
	if o.Enc == EncQuicklist {
		return o.Coll().(*values.Quicklist).IterAt(start, back)
	}
	return values.ListpackIterAt(o.Bytes(), start, back)
}

// ListIndex returns element i (0 <= i < ListLen(o)).
func ListIndex(o *Object, i int) []byte {
	if o.Enc == EncQuicklist {
		return o.Coll().(*values.Quicklist).Index(i)
	}
	v, _ := listpack.Next(o.Bytes(), listpack.Offset(o.Bytes(), i))
	return v
}

// ListSet replaces element i (0 <= i < ListLen(o)) with v.
func ListSet(o *Object, i int, v []byte, lim *EncodingLimits) {
	fill := lim.ListMaxListpackSize
	if o.Enc != EncQuicklist {
		off := listpack.Offset(o.Bytes(), i)
		_, next := listpack.Next(o.Bytes(), off)
		size := len(o.Bytes()) - listpack.First - (next - off)
		if listpack.Len(o.Bytes()) == 1 || values.NodeFits(size, listpack.Len(o.Bytes())-1, values.NodeEntrySize(len(v)), fill) {
			lp, _ := listpack.Replace(o.Bytes(), off, v)
			o.SetBytes(lp)
			return
		}
		listToQuicklist(o, lim)
	}
	o.Coll().(*values.Quicklist).Set(i, v, fill)
}

// ListInsert adds v before (after false) or after the first element equal to
// pivot, and reports whether pivot was found.
func ListInsert(o *Object, pivot, v []byte, after bool, lim *EncodingLimits) bool {
	fill := lim.ListMaxListpackSize
	if o.Enc == EncQuicklist {
		return o.Coll().(*values.Quicklist).InsertPivot(pivot, v, after, fill)
	}
	for off := listpack.First; off < len(o.Bytes()); {
		e, next := listpack.Next(o.Bytes(), off)
		if string(e) != string(pivot) {
			off = next
			continue
		}
		if !values.ListpackFits(o.Bytes(), values.NodeEntrySize(len(v)), fill) {
			i := 0
			for p := listpack.First; p < off; i++ {
				_, p = listpack.Next(o.Bytes(), p)
			}
			if after {
				i++
			}
			listToQuicklist(o, lim).Insert(i, v, fill)
			return true
		}
		if after {
			off = next
		}
		o.SetBytes(listpack.Insert(o.Bytes(), off, v))
		return true
	}
	return false
}

// ListRemove removes elements equal to v: the first limit of them from the
// front, or from the back when fromBack, or all of them when limit is 0. It
// returns how many it removed.
func ListRemove(o *Object, v []byte, limit int, fromBack bool) int {
	skip := 0
	if fromBack && limit > 0 {
		// Removing the last limit matches is skipping all but them.
		total := listCount(o, v)
		if total <= limit {
			limit = 0
		} else {
			skip = total - limit
		}
	}
	r := values.NewEqualRemover(v, limit, skip)
	if o.Enc == EncQuicklist {
		o.Coll().(*values.Quicklist).RemoveWhere(&r)
		return r.Removed()
	}
	lp := o.Bytes()
	w := listpack.First
	for rd := listpack.First; rd < len(lp); {
		e, next := listpack.Next(lp, rd)
		if !r.Take(e) {
			if w != rd {
				copy(lp[w:], lp[rd:next])
			}
			w += next - rd
		}
		rd = next
	}
	if removed := r.Removed(); removed > 0 {
		o.SetBytes(lp[:w])
		values.ListpackSetLen(o.Bytes(), listpack.Len(lp)-removed)
	}
	return r.Removed()
}

// listCount is how many elements of o equal v.
func listCount(o *Object, v []byte) int {
	n := ListLen(o)
	it := ListIterAt(o, 0, false)
	c := 0
	for range n {
		if string(it.Next()) == string(v) {
			c++
		}
	}
	return c
}

// ListElements returns copies of o's elements in order (tests and tools).
func ListElements(o *Object) [][]byte {
	n := ListLen(o)
	out := make([][]byte, 0, n)
	if n == 0 {
		return out
	}
	it := ListIterAt(o, 0, false)
	for range n {
		out = append(out, slices.Clone(it.Next()))
	}
	return out
}
