package commands

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// naiveFindBit is findBit one bit at a time: the reference.
func naiveFindBit(p []byte, sb, eb int64, bit byte) int64 {
	for i := sb; i <= eb; i++ {
		if (p[i>>3]>>(7-uint(i&7)))&1 == bit {
			return i
		}
	}
	return -1
}

// TestFindBitMatchesNaive: findBit agrees with a bit-by-bit scan over runs
// of the other bit with one hit placed anywhere, for both bits and ranges
// starting and ending at every alignment of the 32-byte and 8-byte steps.
func TestFindBitMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, bit := range []byte{0, 1} {
		fill := byte(0)
		if bit == 0 {
			fill = 0xff
		}
		for n := 1; n <= 140; n++ {
			p := make([]byte, n)
			for i := range p {
				p[i] = fill
			}
			hit := int64(-1)
			if rng.IntN(4) > 0 {
				hit = rng.Int64N(int64(8 * n))
				p[hit>>3] ^= 0x80 >> uint(hit&7)
			}
			for k := 0; k < 20; k++ {
				sb := rng.Int64N(int64(8 * n))
				eb := sb + rng.Int64N(int64(8*n)-sb)
				if got, want := findBit(p, sb, eb, bit), naiveFindBit(p, sb, eb, bit); got != want {
					t.Fatalf("bit %d, %d bytes, hit %d, range %d..%d: findBit %d, want %d", bit, n, hit, sb, eb, got, want)
				}
			}
		}
	}
}

// BenchmarkFindBit scans 8 MiB for a bit found in the last byte, as
// "BITPOS key bit" on docs/performance.md's long strings: bit 1 over zeros
// never written (a fresh allocation, whose pages the kernel maps to its
// zero page until they are written, as svcdb's SETBIT growth), bit 1 over
// zeros written (real pages), and bit 0 over 0xff.
func BenchmarkFindBit(b *testing.B) {
	const size = 8 << 20
	cases := []struct {
		name string
		bit  byte
		make func() []byte
	}{
		{"bit=1/zeros-unwritten", 1, func() []byte {
			p := make([]byte, size)
			p[size-1] = 1
			return p
		}},
		{"bit=1/zeros-written", 1, func() []byte {
			p := make([]byte, size)
			for i := range p {
				p[i] = 0xff
			}
			clear(p)
			p[size-1] = 1
			return p
		}},
		{"bit=0/ones", 0, func() []byte {
			p := make([]byte, size)
			for i := range p {
				p[i] = 0xff
			}
			p[size-1] = 0xfe
			return p
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p := c.make()
			want := int64(8*size - 1)
			b.SetBytes(size)
			b.ResetTimer()
			for b.Loop() {
				if got := findBit(p, 0, 8*size-1, c.bit); got != want {
					b.Fatal(fmt.Sprint("findBit ", got, ", want ", want))
				}
			}
		})
	}
}
