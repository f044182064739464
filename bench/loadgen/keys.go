package loadgen

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// keyGen draws key numbers for one connection. It is a concrete struct with a
// switch rather than an interface so the per-request call can be inlined and
// nothing escapes.
type keyGen struct {
	pattern KeyPattern
	min     uint64 // KeyMin
	span    uint64 // KeyMax-KeyMin+1, >= 1
	// Sequential and Parallel walk [lo, lo+n) relative to min, from next.
	lo, n, next uint64
	// Gaussian.
	median, stddev float64
	rng            *rand.Rand
}

// newKeyGen builds connection conn's (of conns) generator for pattern p.
func newKeyGen(p KeyPattern, c *Config, conn, conns int, rng *rand.Rand) keyGen {
	g := keyGen{pattern: p, min: c.KeyMin, span: c.KeyMax - c.KeyMin + 1, rng: rng}
	switch p {
	case Sequential:
		// Whole range, staggered start.
		g.lo, g.n = 0, g.span
		g.next = mulDiv(uint64(conn), g.span, uint64(conns))
	case Parallel:
		g.lo = mulDiv(uint64(conn), g.span, uint64(conns))
		hi := mulDiv(uint64(conn+1), g.span, uint64(conns))
		if hi == g.lo {
			hi = g.lo + 1 // more connections than keys: share
		}
		g.n = hi - g.lo
	case Gaussian:
		g.median = c.KeyMedian
		if g.median == 0 {
			g.median = float64(c.KeyMin) + float64(g.span-1)/2
		}
		g.stddev = c.KeyStddev
		if g.stddev == 0 {
			g.stddev = float64(g.span) / 6
		}
	}
	return g
}

// mulDiv returns a*b/c for a < c without overflowing.
func mulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	q, _ := bits.Div64(hi, lo, c)
	return q
}

// key returns the next key number.
func (g *keyGen) key() uint64 {
	switch g.pattern {
	case Sequential, Parallel:
		k := g.min + g.lo + g.next
		if g.next++; g.next == g.n {
			g.next = 0
		}
		return k
	case Gaussian:
		return g.gaussian()
	default:
		return g.min + g.rng.Uint64N(g.span)
	}
}

func (g *keyGen) gaussian() uint64 {
	lo, hi := float64(g.min), float64(g.min+g.span-1)
	// Redraw values outside the range, like memtier; after a few misses
	// (a median far outside the range) clamp instead of looping forever.
	var v float64
	for try := 0; try < 8; try++ {
		v = math.Round(g.rng.NormFloat64()*g.stddev + g.median)
		if v >= lo && v <= hi {
			return uint64(v)
		}
	}
	return uint64(math.Min(math.Max(v, lo), hi))
}
