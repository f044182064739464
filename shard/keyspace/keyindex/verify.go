package keyindex

import "fmt"

// Verify checks the invariants written in the package doc, with hashOf
// giving each stored value's hash. It walks both tables: for tests and
// invariant builds, never for commands.
func (x *Index) Verify(hashOf func(v uint32) uint64) error {
	seen := make(map[uint32]bool, x.live)
	used := 0
	for ti, t := range [2]*table{&x.cur, &x.old} {
		n := t.size()
		if n == 0 {
			continue
		}
		if n&(n-1) != 0 || n < minSize || int(t.shift) != 64-log2(n) {
			return fmt.Errorf("table %d: %d buckets, shift %d", ti, n, t.shift)
		}
		switch {
		case t.w == wideBucket && t.vmask == 1<<32-1 && len(t.b) == n*wideBucket:
		case t.w == narrowBucket && t.vmask == narrowMax && len(t.b) == n*narrowBucket+1:
			if ti == 0 && x.top > narrowMax {
				return fmt.Errorf("cur is narrow, but %d was inserted", x.top)
			}
		default:
			return fmt.Errorf("table %d: width %d, mask %#x, %d bytes for %d buckets", ti, t.w, t.vmask, len(t.b), n)
		}
		for i := range n {
			tag := t.tag(uint64(i))
			if ti == 0 && tag != tagEmpty {
				used++
			}
			if tag < tagLive {
				if tag != tagEmpty && tag != tagDeleted {
					return fmt.Errorf("table %d bucket %d: tag %#x", ti, i, tag)
				}
				continue
			}
			if ti == 1 && i < x.moved {
				return fmt.Errorf("old bucket %d below moved %d holds %d", i, x.moved, t.val(uint64(i)))
			}
			v := t.val(uint64(i))
			if v > x.top {
				return fmt.Errorf("table %d bucket %d: value %d above the largest inserted, %d", ti, i, v, x.top)
			}
			if seen[v] {
				return fmt.Errorf("value %d stored twice", v)
			}
			seen[v] = true
			h := hashOf(v)
			if tag != tagOf(h) {
				return fmt.Errorf("table %d bucket %d: value %d tag %#x, hash says %#x", ti, i, v, tag, tagOf(h))
			}
			for j := int(h >> t.shift); j != i; j = (j + 1) & (n - 1) {
				if t.tag(uint64(j)) == tagEmpty {
					return fmt.Errorf("table %d: value %d at %d unreachable from home %d (empty %d)", ti, v, i, h>>t.shift, j)
				}
			}
		}
	}
	if len(seen) != x.live {
		return fmt.Errorf("%d values stored, live says %d", len(seen), x.live)
	}
	if used != x.used {
		return fmt.Errorf("cur has %d used buckets, used says %d", used, x.used)
	}
	if x.cur.size() > 0 && x.used*8 > x.cur.size()*7 {
		return fmt.Errorf("cur %d used of %d buckets: over 7/8", x.used, x.cur.size())
	}
	if !x.Rehashing() && x.moved != 0 {
		return fmt.Errorf("moved %d with no old table", x.moved)
	}
	return nil
}

func log2(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}
