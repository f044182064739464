package keyspace

import (
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/values"
)

// The start and the cursor arithmetic HSCAN, SSCAN and ZSCAN share.

// emptyScan is Redis' shared.emptyscan: cursor 0 and no elements.
var emptyScan = []byte("*2\r\n$1\r\n0\r\n*0\r\n")

// parseCollScanCursor reads an HSCAN/SSCAN cursor (checked before the key, as
// in Redis).
func (c *Ctx) parseCollScanCursor(arg []byte) (uint64, bool) {
	v, ok := values.ParseStrtoul(arg)
	if !ok {
		c.Err("ERR invalid cursor")
	}
	return v, ok
}

// parseCollScanOptions reads HSCAN/SSCAN's MATCH and COUNT (Redis'
// scanGenericCommand: TYPE is SCAN's alone, a COUNT below 1 is a syntax
// error). A "*" pattern is returned as nil: it matches everything.
func (c *Ctx) parseCollScanOptions(args [][]byte) (pattern []byte, count int64, ok bool) {
	count = 10
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.SyntaxErr()
			return nil, 0, false
		}
		a, v := args[i], args[i+1]
		switch {
		case resp.EqualFold(a, "count"):
			n, ok := resp.ParseInt(v)
			if !ok {
				c.NotInteger()
				return nil, 0, false
			}
			if n < 1 {
				c.SyntaxErr()
				return nil, 0, false
			}
			count = n
		case resp.EqualFold(a, "match"):
			pattern = v
			if len(v) == 1 && v[0] == '*' {
				pattern = nil
			}
		default:
			c.SyntaxErr()
			return nil, 0, false
		}
	}
	return pattern, count, true
}

// CollScanStart begins HSCAN, SSCAN and ZSCAN of a kind key: it reads the
// cursor, looks the key up (a missing key is an empty scan), then reads the
// options, in Redis' order, and opens the two-element reply. ok is false once
// it has replied.
func (c *Ctx) CollScanStart(kind Kind) (o *Object, cursor uint64, pattern []byte, count int64, ok bool) {
	if cursor, ok = c.parseCollScanCursor(c.Args[2]); !ok {
		return nil, 0, nil, 0, false
	}
	key := c.Args[1]
	if o, ok = c.ReadKind(c.DBFor(key), key, kind); !ok {
		return nil, 0, nil, 0, false
	}
	if o == nil {
		c.Raw(emptyScan)
		return nil, 0, nil, 0, false
	}
	if pattern, count, ok = c.parseCollScanOptions(c.Args[3:]); !ok {
		return nil, 0, nil, 0, false
	}
	c.Array(2)
	return o, cursor, pattern, count, true
}

// ScanPositions is the cursor arithmetic of HSCAN/SSCAN over an htable of n
// entries: cursor 0 starts at the top position, cursor p > 0 at position p-1
// (or the top, if the table shrank below it). A call visits count positions
// downwards, hi to lo inclusive, and the next cursor is lo, which is 0 once
// position 0 is visited. Removals only move entries down (htable.removeAt),
// so an entry present for the whole scan is at or below the cursor whenever
// the scan resumes, and is returned at least once.
func ScanPositions(n int, cursor uint64, count int64) (hi, lo int, next uint64) {
	hi = n - 1
	if cursor > 0 && cursor-1 < uint64(n) {
		hi = int(cursor - 1)
	}
	if int64(hi)+1 > count {
		lo = hi + 1 - int(count)
	}
	return hi, lo, uint64(lo)
}

// SpliceHeader inserts a "<prefix><n>\r\n" header at c.Out[start:], in front
// of the n elements already appended (for replies whose length is known only
// once written).
func (c *Ctx) SpliceHeader(start int, prefix byte, n int) {
	var buf [24]byte
	h := append(buf[:0], prefix)
	h = strconv.AppendInt(h, int64(n), 10)
	h = append(h, '\r', '\n')
	end := len(c.Out)
	c.Out = append(c.Out, h...)
	copy(c.Out[start+len(h):], c.Out[start:end])
	copy(c.Out[start:], h)
}
