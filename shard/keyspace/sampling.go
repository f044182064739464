package keyspace

import (
	"math"
	"math/rand/v2"

	"github.com/svcdb/svcdb/core/resp"
)

// Random sampling of a collection's members: HRANDFIELD, SRANDMEMBER and
// ZRANDMEMBER with a count share Redis' argument rules, its bound on the
// reply and its choice of distinct positions.

// errRandomCountRange is Redis 7.0.15's reply when HRANDFIELD's or
// SRANDMEMBER's count is outside getRangeLongFromObjectOrReply(-LONG_MAX,
// LONG_MAX).
const errRandomCountRange = "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"

// ParseRandomCount reads HRANDFIELD's or SRANDMEMBER's count.
func (c *Ctx) ParseRandomCount(arg []byte) (int64, bool) {
	l, ok := resp.ParseInt(arg)
	if !ok {
		c.NotInteger()
		return 0, false
	}
	if l == math.MinInt64 {
		c.Err(errRandomCountRange)
		return 0, false
	}
	return l, true
}

// MaxRandomReply bounds the reply of a random-sampling command with a
// negative count (repeats allowed, so the count alone sets its size). Redis
// builds a reply of any size (and is killed by the OOM killer); svcdb
// replies an error instead once the reply passes proto-max-bulk-len. A
// variable so that a test can lower it.
var MaxRandomReply = MaxStringLen

const ErrRandomReplyTooLarge = "ERR reply too large: the count asks for more than proto-max-bulk-len bytes"

// RandomReplyTooLarge reports whether the reply begun at start has grown
// past MaxRandomReply, after replacing it with an error.
func (c *Ctx) RandomReplyTooLarge(start int) bool {
	if len(c.Out)-start <= MaxRandomReply {
		return false
	}
	c.Out = c.Out[:start]
	c.Err(ErrRandomReplyTooLarge)
	return true
}

// SampleDistinct calls fn with k distinct positions out of n, in random
// order. REQUIRES: 0 < k < n.
func SampleDistinct(n, k int, fn func(i int)) {
	if k*3 > n {
		// Many of them: a partial Fisher-Yates shuffle of all positions.
		perm := make([]int32, n)
		for i := range perm {
			perm[i] = int32(i)
		}
		for i := range k {
			j := i + rand.IntN(n-i)
			perm[i], perm[j] = perm[j], perm[i]
			fn(int(perm[i]))
		}
		return
	}
	// Few of them: draw until k distinct ones came up.
	seen := make(map[int]struct{}, k)
	for len(seen) < k {
		i := rand.IntN(n)
		if _, dup := seen[i]; dup {
			continue
		}
		seen[i] = struct{}{}
		fn(i)
	}
}

// RandomCountTarget starts SRANDMEMBER, HRANDFIELD and ZRANDMEMBER with a
// count as Redis does: it reads key as kind and replies for a missing key or
// a count of 0 (an empty array) or the wrong type; o is nil when it replied.
// A negative count l allows repeats (unique false) of -l elements.
func (c *Ctx) RandomCountTarget(key []byte, kind Kind, l int64) (o *Object, count uint64, unique bool) {
	o, ok := c.ReadKind(c.DBFor(key), key, kind)
	if !ok {
		return nil, 0, false
	}
	if o == nil || l == 0 {
		c.Out = append(c.Out, resp.EmptyArray...)
		return nil, 0, false
	}
	if l < 0 {
		return o, uint64(-l), false
	}
	return o, uint64(l), true
}
