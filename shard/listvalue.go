package shard

import (
	"slices"

	"github.com/svcdb/svcdb/shard/listpack"
	"github.com/svcdb/svcdb/shard/values"
)

// A list lives in one of two encodings:
//
//   - encListpack: o.str is one listpack (package listpack) holding every
//     element in order. Small lists stay here: one flat buffer, no pointers.
//   - encQuicklist: o.coll is a *quicklist, a sequence of nodes each holding a
//     run of elements up to the node limit (list-max-listpack-size). O(1)
//     push and pop at both ends, O(n/node) index.
//
// A list converts from the first to the second when a write would take the
// listpack past the node limit or past listpackMaxEntries entries, and never
// back. Both report "quicklist" to OBJECT ENCODING, as Redis 7.0 (whose lists
// are always quicklists), so where the switch happens is not observable.

// ---- the list as handlers see it ------------------------------------------------

// listLen is the number of elements of list o.
func listLen(o *object) int {
	if o.enc == encQuicklist {
		return o.coll.(*values.Quicklist).Len()
	}
	return listpack.Len(o.str)
}

// listToQuicklist converts o from a listpack to a quicklist, filling nodes
// up to the node limit, each sized to what it holds plus some slack at both
// ends.
func listToQuicklist(o *object, fill int64) *values.Quicklist {
	q := values.QuicklistFromListpack(o.str, fill)
	o.str, o.coll, o.enc = nil, q, encQuicklist
	return q
}

// listPush adds v at the front or back of o, converting o to a quicklist
// when its listpack is full.
func listPush(o *object, v []byte, front bool, fill int64) {
	if o.enc == encQuicklist {
		o.coll.(*values.Quicklist).Push(v, front, fill)
		return
	}
	if !values.ListpackFits(o.str, values.NodeEntrySize(len(v)), fill) {
		listToQuicklist(o, fill).Push(v, front, fill)
		return
	}
	if front && len(o.str) > listpack.First {
		o.str = listpack.Insert(o.str, listpack.First, v)
	} else {
		o.str = listpack.Append(o.str, v)
	}
}

// listEnd returns o's first (front) or last element. The bytes are valid
// until o changes. REQUIRES: o is not empty.
func listEnd(o *object, front bool) []byte {
	if o.enc == encQuicklist {
		return o.coll.(*values.Quicklist).End(front)
	}
	off := listpack.First
	if !front {
		off = values.ListpackLastOffset(o.str)
	}
	v, _ := listpack.Next(o.str, off)
	return v
}

// listDelEnds removes the first k (front) or last k elements of o.
// REQUIRES: k <= listLen(o).
func listDelEnds(o *object, k int, front bool) {
	if k == 0 {
		return
	}
	if o.enc == encQuicklist {
		q := o.coll.(*values.Quicklist)
		if front {
			q.DelFront(k)
		} else {
			q.DelBack(k)
		}
		return
	}
	if front {
		o.str = listpack.Delete(o.str, listpack.First, k)
		return
	}
	n := listpack.Len(o.str)
	o.str = listpack.Delete(o.str, values.ListpackSkip(o.str, listpack.First, n-k), k)
}

// listIterAt returns an iterator whose first element is element start
// (0 <= start < listLen(o)).
func listIterAt(o *object, start int, back bool) values.ListIter {
	if o.enc == encQuicklist {
		return o.coll.(*values.Quicklist).IterAt(start, back)
	}
	return values.ListpackIterAt(o.str, start, back)
}

// listIndex returns element i (0 <= i < listLen(o)).
func listIndex(o *object, i int) []byte {
	if o.enc == encQuicklist {
		return o.coll.(*values.Quicklist).Index(i)
	}
	v, _ := listpack.Next(o.str, listpack.Offset(o.str, i))
	return v
}

// listSet replaces element i (0 <= i < listLen(o)) with v.
func listSet(o *object, i int, v []byte, fill int64) {
	if o.enc != encQuicklist {
		off := listpack.Offset(o.str, i)
		_, next := listpack.Next(o.str, off)
		size := len(o.str) - listpack.First - (next - off)
		if listpack.Len(o.str) == 1 || values.NodeFits(size, listpack.Len(o.str)-1, values.NodeEntrySize(len(v)), fill) {
			o.str, _ = listpack.Replace(o.str, off, v)
			return
		}
		listToQuicklist(o, fill)
	}
	o.coll.(*values.Quicklist).Set(i, v, fill)
}

// listInsert adds v before (after false) or after the first element equal to
// pivot, and reports whether pivot was found.
func listInsert(o *object, pivot, v []byte, after bool, fill int64) bool {
	if o.enc == encQuicklist {
		return o.coll.(*values.Quicklist).InsertPivot(pivot, v, after, fill)
	}
	for off := listpack.First; off < len(o.str); {
		e, next := listpack.Next(o.str, off)
		if string(e) != string(pivot) {
			off = next
			continue
		}
		if !values.ListpackFits(o.str, values.NodeEntrySize(len(v)), fill) {
			i := 0
			for p := listpack.First; p < off; i++ {
				_, p = listpack.Next(o.str, p)
			}
			if after {
				i++
			}
			listToQuicklist(o, fill).Insert(i, v, fill)
			return true
		}
		if after {
			off = next
		}
		o.str = listpack.Insert(o.str, off, v)
		return true
	}
	return false
}

// listRemove removes elements equal to v: the first limit of them from the
// front, or from the back when fromBack, or all of them when limit is 0. It
// returns how many it removed.
func listRemove(o *object, v []byte, limit int, fromBack bool) int {
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
	if o.enc == encQuicklist {
		o.coll.(*values.Quicklist).RemoveWhere(&r)
		return r.Removed()
	}
	lp := o.str
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
		o.str = lp[:w]
		values.ListpackSetLen(o.str, listpack.Len(lp)-removed)
	}
	return r.Removed()
}

// listCount is how many elements of o equal v.
func listCount(o *object, v []byte) int {
	n := listLen(o)
	it := listIterAt(o, 0, false)
	c := 0
	for range n {
		if string(it.Next()) == string(v) {
			c++
		}
	}
	return c
}

// listElements returns copies of o's elements in order (tests and tools).
func listElements(o *object) [][]byte {
	n := listLen(o)
	out := make([][]byte, 0, n)
	if n == 0 {
		return out
	}
	it := listIterAt(o, 0, false)
	for range n {
		out = append(out, slices.Clone(it.Next()))
	}
	return out
}
