package hll

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// SelfTest is PFSELFTEST: the dense registers keep what is written to them
// without disturbing their neighbours, and dense and sparse HLLs fed the
// same ten million elements agree with each other and stay within six
// standard errors of the truth at every power of ten. The error texts are
// Redis'.
func SelfTest(sparseMax int) error {
	dense := make([]byte, DenseSize)
	regs := dense[HeaderSize:]
	var want [Registers]uint8
	for cycle := 0; cycle < 1000; cycle++ {
		for i := range want {
			r := uint8(rand.Uint32() & RegisterMax)
			want[i] = r
			denseSet(regs, i, r)
		}
		for i := range want {
			if v := denseGet(regs, i); v != want[i] {
				return fmt.Errorf("TESTFAILED Register %d should be %d but is %d", i, want[i], v)
			}
		}
	}

	clear(dense)
	copy(dense, "HYLL")
	sparse := NewSparse(nil)
	relerr := 1.04 / math.Sqrt(Registers)
	checkpoint := uint64(1)
	seed := rand.Uint64()
	var ele [8]byte
	for j := uint64(1); j <= 10000000; j++ {
		x := j ^ seed
		for k := range ele {
			ele[k] = byte(x >> (8 * k))
		}
		if _, _, err := Add(dense, ele[:], sparseMax); err != nil {
			return fmt.Errorf("TESTFAILED dense add: %v", err)
		}
		sparse, _, _ = Add(sparse, ele[:], sparseMax)
		if j != checkpoint {
			continue
		}
		if j < uint64(sparseMax/2) && sparse[4] != Sparse {
			return fmt.Errorf("TESTFAILED sparse encoding not used")
		}
		dc, _ := Count(dense)
		sc, _ := Count(sparse)
		if dc != sc {
			return fmt.Errorf("TESTFAILED dense/sparse disagree")
		}
		abserr := int64(checkpoint) - int64(dc)
		maxerr := int64(math.Ceil(relerr * 6 * float64(checkpoint)))
		if j == 10 {
			maxerr = 1
		}
		if abserr < 0 {
			abserr = -abserr
		}
		if abserr > maxerr {
			return fmt.Errorf("TESTFAILED Too big error. card:%d abserr:%d", checkpoint, abserr)
		}
		checkpoint *= 10
	}
	return nil
}
