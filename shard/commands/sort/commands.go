package sort

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// Register adds SORT and SORT_RO to the table. Both hold every shard: see
// the package doc, "Keys named by patterns".
func Register(add func(name string, h keyspace.Handler, r keyspace.RouteKind)) {
	add("sort", cmdSort, keyspace.RouteAll)
	add("sort_ro", cmdSortRO, keyspace.RouteAll)
}

func cmdSort(c *keyspace.Ctx)   { sortGeneric(c, false) }
func cmdSortRO(c *keyspace.Ctx) { sortGeneric(c, true) }

// item is one element to sort: Redis' redisSortObject.
type item struct {
	val    []byte
	score  float64
	cmp    []byte // ALPHA with BY: the BY value
	hasCmp bool
}

func sortGeneric(c *keyspace.Ctx, readonly bool) {
	desc, alpha, dontSort := false, false, false
	var limitStart, limitCount int64 = 0, -1
	var sortBy, storeKey []byte
	var gets [][]byte
	for j := 2; j < len(c.Args); j++ {
		a := c.Args[j]
		left := len(c.Args) - j - 1
		switch {
		case resp.EqualFold(a, "asc"):
			desc = false
		case resp.EqualFold(a, "desc"):
			desc = true
		case resp.EqualFold(a, "alpha"):
			alpha = true
		case resp.EqualFold(a, "limit") && left >= 2:
			s, ok1 := resp.ParseInt(c.Args[j+1])
			if !ok1 {
				c.NotInteger()
				return
			}
			n, ok2 := resp.ParseInt(c.Args[j+2])
			if !ok2 {
				c.NotInteger()
				return
			}
			limitStart, limitCount = s, n
			j += 2
		case !readonly && resp.EqualFold(a, "store") && left >= 1:
			storeKey = c.Args[j+1]
			j++
		case resp.EqualFold(a, "by") && left >= 1:
			sortBy = c.Args[j+1]
			dontSort = bytes.IndexByte(cString(sortBy), '*') < 0
			j++
		case resp.EqualFold(a, "get") && left >= 1:
			gets = append(gets, c.Args[j+1])
			j++
		default:
			c.SyntaxErr()
			return
		}
	}

	key := c.Args[1]
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil {
		d.Miss()
	} else {
		d.Hit()
		if o.Kind != keyspace.KindSet && o.Kind != keyspace.KindList && o.Kind != keyspace.KindZSet {
			c.WrongType()
			return
		}
	}
	kind := keyspace.KindList
	if o != nil {
		kind = o.Kind
	}
	// A set has no order of its own: stored, it is sorted (ALPHA), so the
	// result is the same on a replica and on replay.
	if dontSort && kind == keyspace.KindSet && storeKey != nil {
		dontSort, alpha, sortBy = false, true, nil
	}

	n := 0
	if o != nil {
		switch kind {
		case keyspace.KindList:
			n = keyspace.ListLen(o)
		case keyspace.KindSet:
			n = keyspace.SetLen(o)
		default:
			n = keyspace.ZSetLen(o)
		}
	}
	// LIMIT's sanity checks, as Redis'.
	start := max(limitStart, 0)
	end := int64(n) - 1
	if limitCount >= 0 {
		end = start + limitCount - 1
	}
	if start >= int64(n) {
		start, end = int64(n)-1, int64(n)-2
	}
	if end >= int64(n) {
		end = int64(n) - 1
	}

	var items []item
	direct := dontSort && (kind == keyspace.KindList || kind == keyspace.KindZSet)
	switch {
	case o == nil:
	case direct:
		// The native order, ASC or DESC, loading only LIMIT's range.
		if end >= start {
			cnt := int(end - start + 1)
			items = make([]item, 0, cnt)
			if kind == keyspace.KindList {
				from := int(start)
				if desc {
					from = n - int(start) - 1
				}
				it := keyspace.ListIterAt(o, from, desc)
				for range cnt {
					items = append(items, item{val: slices.Clone(it.Next())})
				}
			} else {
				var buf [256]int
				z := keyspace.ZView(o, buf[:])
				if desc {
					z.SeekRank(n - int(start) - 1)
				} else {
					z.SeekRank(int(start))
				}
				for range cnt {
					items = append(items, item{val: slices.Clone(z.Member())})
					z.Move(desc)
				}
			}
			end -= start
			start = 0
		}
	case kind == keyspace.KindList:
		items = make([]item, 0, n)
		it := keyspace.ListIterAt(o, 0, false)
		for range n {
			items = append(items, item{val: slices.Clone(it.Next())})
		}
	case kind == keyspace.KindSet:
		items = make([]item, 0, n)
		var b [20]byte
		for it := keyspace.NewSetIter(o); ; {
			m, ok := it.Next()
			if !ok {
				break
			}
			items = append(items, item{val: slices.Clone(m.Bytes(&b))})
		}
	default:
		items = make([]item, 0, n)
		var buf [256]int
		z := keyspace.ZView(o, buf[:])
		z.SeekRank(0)
		for range n {
			items = append(items, item{val: slices.Clone(z.Member())})
			z.Next()
		}
	}

	convErr := false
	if !dontSort {
		for i := range items {
			it := &items[i]
			byVal := it.val
			if sortBy != nil {
				v, ok := lookupByPattern(c, sortBy, it.val)
				if !ok {
					continue
				}
				byVal = v
			}
			if alpha {
				if sortBy != nil {
					it.cmp, it.hasCmp = slices.Clone(byVal), true // byVal may be c.Scratch
				}
				continue
			}
			f, ok := strtod(byVal)
			it.score = f
			if !ok {
				convErr = true
			}
		}
		byPattern := sortBy != nil
		slices.SortStableFunc(items, func(x, y item) int {
			var r int
			switch {
			case !alpha:
				switch {
				case x.score > y.score:
					r = 1
				case x.score < y.score:
					r = -1
				default:
					r = bytes.Compare(x.val, y.val)
				}
			case byPattern:
				switch {
				case !x.hasCmp || !y.hasCmp:
					switch {
					case x.hasCmp == y.hasCmp:
						r = 0
					case !x.hasCmp:
						r = -1
					default:
						r = 1
					}
				default:
					r = bytes.Compare(x.cmp, y.cmp)
				}
			default:
				r = bytes.Compare(x.val, y.val)
			}
			if desc {
				return -r
			}
			return r
		})
	}

	count := int(end - start + 1)
	if count < 0 {
		count = 0
	}
	outLen := count
	if len(gets) > 0 {
		outLen = len(gets) * count
	}
	if convErr {
		c.Err("ERR One or more scores can't be converted into double")
		return
	}
	if storeKey == nil {
		c.Array(outLen)
		for j := start; j <= end; j++ {
			if len(gets) == 0 {
				c.Bulk(items[j].val)
			}
			for _, g := range gets {
				if v, ok := lookupByPattern(c, g, items[j].val); ok {
					c.Bulk(v)
				} else {
					c.Null()
				}
			}
		}
		return
	}
	dd := c.DBFor(storeKey)
	if outLen == 0 {
		old := dd.Lookup(storeKey, c.Now)
		if old != nil {
			dd.Remove(old)
		}
		if old != nil {
			c.Notify(keyspace.NotifyGeneric, "del", storeKey)
		}
		c.Int(0)
		return
	}
	// The values are copied first: a GET pattern may name the destination.
	vals := make([][]byte, 0, outLen)
	for j := start; j <= end; j++ {
		if len(gets) == 0 {
			vals = append(vals, items[j].val)
		}
		for _, g := range gets {
			v, _ := lookupByPattern(c, g, items[j].val)
			vals = append(vals, slices.Clone(v)) // a missing key stores ""
		}
	}
	var so *keyspace.Object
	if old := dd.Lookup(storeKey, c.Now); old != nil {
		dd.Remove(old)
		so = dd.Reinsert(storeKey, keyspace.KindList) // setKey: no new event
	} else {
		so = dd.Insert(storeKey, keyspace.KindList)
	}
	so.Enc = keyspace.EncListpack
	fill := c.Limits()
	for _, v := range vals {
		keyspace.ListPush(so, v, false, fill)
	}
	dd.ValueChanged(so, 0)
	c.Notify(keyspace.NotifyList, "sortstore", storeKey)
	c.Int(int64(outLen))
}

// lookupByPattern is Redis' lookupKeyByPattern: "#" is the element itself;
// otherwise the first '*' of the pattern is replaced by the element and the
// key read (as lookupKeyRead, on whatever shard it lives), a string's value
// or, with "->field" after the '*', a hash field's. A pattern without '*',
// a missing key or a key of another type gives nothing.
func lookupByPattern(c *keyspace.Ctx, pattern, elem []byte) ([]byte, bool) {
	p := cString(pattern)
	if len(p) == 1 && p[0] == '#' {
		return elem, true
	}
	star := bytes.IndexByte(p, '*')
	if star < 0 {
		return nil, false
	}
	var field []byte
	keyEnd := len(pattern)
	if f := bytes.Index(p[star+1:], []byte("->")); f >= 0 && star+1+f+2 < len(p) {
		keyEnd = star + 1 + f
		field = pattern[keyEnd+2:]
	}
	key := make([]byte, 0, keyEnd-1+len(elem))
	key = append(key, pattern[:star]...)
	key = append(key, elem...)
	key = append(key, pattern[star+1:keyEnd]...)
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil {
		d.Miss()
		return nil, false
	}
	d.Hit()
	if field != nil {
		if o.Kind != keyspace.KindHash {
			return nil, false
		}
		return keyspace.HashGet(o, field)
	}
	if o.Kind != keyspace.KindString {
		return nil, false
	}
	return o.Value(&c.Scratch), true
}

// cString is b up to its first NUL byte: Redis reads patterns with strchr
// and strstr, which stop there.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// strtod is C's strtod as SORT uses it: leading white space is skipped, the
// whole rest must be a number (decimal or hexadecimal, inf, nan), an empty
// string is 0, and an overflow or a NaN is an error.
func strtod(b []byte) (float64, bool) {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] >= '\t' && b[i] <= '\r') {
		i++
	}
	s := string(b[i:])
	if s == "" {
		return 0, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && f != 0 {
			return f, false // overflow: ERANGE
		}
		if h, ok := parseHexInt(s); ok {
			return h, true
		}
		return 0, false
	}
	if math.IsNaN(f) {
		return f, false
	}
	return f, true
}

// parseHexInt reads [+-]0x<hex digits>, which strtod accepts without the
// binary exponent Go's ParseFloat requires.
func parseHexInt(s string) (float64, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if len(s) < 3 || s[0] != '0' || s[1] != 'x' && s[1] != 'X' {
		return 0, false
	}
	var f float64
	for _, ch := range s[2:] {
		var d int
		switch {
		case ch >= '0' && ch <= '9':
			d = int(ch - '0')
		case ch >= 'a' && ch <= 'f':
			d = int(ch-'a') + 10
		case ch >= 'A' && ch <= 'F':
			d = int(ch-'A') + 10
		default:
			return 0, false
		}
		f = f*16 + float64(d)
	}
	if neg {
		f = -f
	}
	return f, true
}
