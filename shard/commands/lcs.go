package commands

import (
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// LCS: the longest common subsequence of two strings, as Redis 7.0's
// lcsCommand (src/t_string.c): the same dynamic-programming table, walked
// back from its end the same way, so the subsequence chosen among equals
// and the ranges IDX reports (last match first) are Redis'. The keys may
// live on different shards: the command holds both (RouteKeys).

func cmdLCS(c *keyspace.Ctx) {
	ka, kb := c.Args[1], c.Args[2]
	var a, b []byte
	oa, ob := lcsLookup(c, ka), lcsLookup(c, kb)
	if oa != nil && oa.Kind != keyspace.KindString || ob != nil && ob.Kind != keyspace.KindString {
		c.Err("ERR The specified keys must contain string values")
		return
	}
	if oa != nil {
		a = append([]byte(nil), oa.Value(&c.Scratch)...) // Scratch holds an integer's digits; b may need it
	}
	if ob != nil {
		b = ob.Value(&c.Scratch)
	}
	getLen, getIdx, withMatchLen := false, false, false
	var minMatchLen int64
	for j := 3; j < len(c.Args); j++ {
		opt := c.Args[j]
		more := len(c.Args) - 1 - j
		switch {
		case resp.EqualFold(opt, "idx"):
			getIdx = true
		case resp.EqualFold(opt, "len"):
			getLen = true
		case resp.EqualFold(opt, "withmatchlen"):
			withMatchLen = true
		case resp.EqualFold(opt, "minmatchlen") && more > 0:
			n, ok := resp.ParseInt(c.Args[j+1])
			if !ok {
				c.NotInteger()
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			c.SyntaxErr()
			return
		}
	}
	if getLen && getIdx {
		c.Err("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	alen, blen := len(a), len(b)
	if alen >= 1<<32-2 || blen >= 1<<32-2 {
		c.Err("ERR String too long for LCS")
		return
	}
	// The table of LCS(i, j), lengths of the LCS of a[:i] and b[:j], in
	// uint32 as Redis has it, and with Redis' bound on its size.
	size := uint64(alen+1) * uint64(blen+1)
	if size*4 > keyspace.MaxStringLen {
		c.Err("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	w := blen + 1
	lcs := make([]uint32, size)
	for i := 1; i <= alen; i++ {
		row, prev := lcs[i*w:(i+1)*w], lcs[(i-1)*w:i*w]
		ai := a[i-1]
		for j := 1; j <= blen; j++ {
			switch {
			case ai == b[j-1]:
				row[j] = prev[j-1] + 1
			case prev[j] > row[j-1]:
				row[j] = prev[j]
			default:
				row[j] = row[j-1]
			}
		}
	}
	total := lcs[alen*w+blen]
	if getLen {
		c.Int(int64(total))
		return
	}

	// Walk back from the end, building the subsequence and, for IDX, the
	// ranges of contiguous matches (emitted last first).
	idx := total
	result := make([]byte, total)
	var header, arrayLen int
	if getIdx {
		c.Out = resp.AppendMapHeader(c.Out, 2, c.RESP3)
		c.BulkString("matches")
		header = len(c.Out) // the array's length is spliced in below, as Redis' deferred length
	}
	aStart, aEnd, bStart, bEnd := alen, 0, 0, 0 // aStart == alen: no open range
	i, j := alen, blen
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			result[idx-1] = a[i-1]
			if aStart == alen {
				aStart, aEnd, bStart, bEnd = i-1, i-1, j-1, j-1
			} else if aStart == i && bStart == j {
				aStart--
				bStart--
			} else {
				emit = true
			}
			if aStart == 0 || bStart == 0 {
				emit = true
			}
			idx--
			i--
			j--
		} else {
			if lcs[(i-1)*w+j] > lcs[i*w+j-1] {
				i--
			} else {
				j--
			}
			if aStart != alen {
				emit = true
			}
		}
		if emit {
			matchLen := aEnd - aStart + 1
			if getIdx && (minMatchLen == 0 || int64(matchLen) >= minMatchLen) {
				if withMatchLen {
					c.Array(3)
				} else {
					c.Array(2)
				}
				c.Array(2)
				c.Int(int64(aStart))
				c.Int(int64(aEnd))
				c.Array(2)
				c.Int(int64(bStart))
				c.Int(int64(bEnd))
				if withMatchLen {
					c.Int(int64(matchLen))
				}
				arrayLen++
			}
			aStart = alen
		}
	}
	if getIdx {
		c.SpliceHeader(header, '*', arrayLen)
		c.BulkString("len")
		c.Int(int64(total))
		return
	}
	c.Bulk(result)
}

// lcsLookup is Redis' lookupKeyRead (hits and misses counted).
func lcsLookup(c *keyspace.Ctx, key []byte) *keyspace.Object {
	d := c.DBFor(key)
	o := d.Lookup(key, c.Now)
	if o == nil {
		d.Miss()
		return nil
	}
	d.Hit()
	return o
}
