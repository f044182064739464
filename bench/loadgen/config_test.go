package loadgen

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseKeyPattern(t *testing.T) {
	f := func(in string, set, get KeyPattern, ok bool) {
		t.Helper()
		s, g, err := ParseKeyPattern(in)
		if (err == nil) != ok || s != set || g != get {
			t.Errorf("ParseKeyPattern(%q) = %c, %c, %v; want %c, %c, ok=%v", in, s, g, err, set, get, ok)
		}
	}
	f("R:R", Random, Random, true)
	f("s:g", Sequential, Gaussian, true)
	f("P:S", Parallel, Sequential, true)
	f("R", 0, 0, false)
	f("X:R", 0, 0, false)
	f("RR:R", 0, 0, false)
}

func TestParseRatio(t *testing.T) {
	f := func(in string, want Ratio, ok bool) {
		t.Helper()
		got, err := ParseRatio(in)
		if (err == nil) != ok || got != want {
			t.Errorf("ParseRatio(%q) = %v, %v; want %v, ok=%v", in, got, err, want, ok)
		}
	}
	f("1:10", Ratio{1, 10}, true)
	f("1:0", Ratio{1, 0}, true)
	f("0:1", Ratio{0, 1}, true)
	f("0:0", Ratio{}, false)
	f("-1:2", Ratio{}, false)
	f("1", Ratio{}, false)
	f("a:b", Ratio{}, false)
}

func TestValidate(t *testing.T) {
	c := DefaultConfig()
	c.Addr = "127.0.0.1:1"
	if err := c.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := DefaultConfig()
	bad.Pipeline, bad.Clients, bad.KeyMin, bad.KeyMax = 0, 0, 10, 5
	err := bad.Validate()
	if err == nil {
		t.Fatal("bad config validated")
	}
	for _, want := range []string{"no server address", "pipeline 0", "clients 0", "key range 10..5"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func testConfig(min, max uint64) *Config {
	c := DefaultConfig()
	c.KeyMin, c.KeyMax = min, max
	return &c
}

func TestSequentialCoversRangeTogether(t *testing.T) {
	c := testConfig(100, 1099) // 1000 keys
	const conns = 7
	seen := map[uint64]bool{}
	for i := 0; i < conns; i++ {
		g := newKeyGen(Sequential, c, i, conns, nil)
		for j := 0; j < 1000/conns+1; j++ {
			k := g.key()
			if k < 100 || k > 1099 {
				t.Fatalf("key %d out of range", k)
			}
			seen[k] = true
		}
	}
	if len(seen) != 1000 {
		t.Fatalf("union of %d connections covered %d keys; want 1000", conns, len(seen))
	}
	// And one connection alone walks the whole range and wraps.
	g := newKeyGen(Sequential, c, 0, conns, nil)
	first := g.key()
	for j := 1; j < 1000; j++ {
		g.key()
	}
	if again := g.key(); again != first {
		t.Fatalf("after 1000 keys got %d; want wrap to %d", again, first)
	}
}

func TestParallelSlicesAreDisjoint(t *testing.T) {
	c := testConfig(0, 99)
	const conns = 3
	owner := map[uint64]int{}
	for i := 0; i < conns; i++ {
		g := newKeyGen(Parallel, c, i, conns, nil)
		for j := 0; j < 200; j++ {
			k := g.key()
			if o, ok := owner[k]; ok && o != i {
				t.Fatalf("key %d used by connections %d and %d", k, o, i)
			}
			owner[k] = i
		}
	}
	if len(owner) != 100 {
		t.Fatalf("covered %d keys; want 100", len(owner))
	}
	// More connections than keys: every connection still gets a key.
	small := testConfig(0, 1)
	for i := 0; i < 5; i++ {
		g := newKeyGen(Parallel, small, i, 5, nil)
		if k := g.key(); k > 1 {
			t.Fatalf("connection %d: key %d out of 0..1", i, k)
		}
	}
}

func TestRandomAndGaussianStayInRange(t *testing.T) {
	c := testConfig(1000, 1999)
	rng := rand.New(rand.NewPCG(1, 1))
	r := newKeyGen(Random, c, 0, 1, rng)
	g := newKeyGen(Gaussian, c, 0, 1, rng)
	var inMiddle int
	for i := 0; i < 100000; i++ {
		if k := r.key(); k < 1000 || k > 1999 {
			t.Fatalf("random key %d out of range", k)
		}
		k := g.key()
		if k < 1000 || k > 1999 {
			t.Fatalf("gaussian key %d out of range", k)
		}
		if k >= 1333 && k <= 1666 { // ±1 stddev
			inMiddle++
		}
	}
	// About 68% within one standard deviation.
	if inMiddle < 64000 || inMiddle > 72000 {
		t.Fatalf("gaussian: %d of 100000 within one stddev; want about 68000", inMiddle)
	}
	// A median far outside the range clamps instead of looping.
	c.KeyMedian = 1e9
	far := newKeyGen(Gaussian, c, 0, 1, rng)
	if k := far.key(); k != 1999 {
		t.Fatalf("far median: key %d; want clamp to 1999", k)
	}
}

func TestRatioSequence(t *testing.T) {
	c := DefaultConfig()
	c.Ratio = Ratio{2, 3}
	w := &worker{cfg: &c}
	var got strings.Builder
	for i := 0; i < 10; i++ {
		got.WriteString(w.nextOp().String()[:1])
	}
	if got.String() != "SSGGGSSGGG" {
		t.Fatalf("ratio 2:3 sequence %s; want SSGGGSSGGG", got.String())
	}
}
