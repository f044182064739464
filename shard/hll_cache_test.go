package shard

import (
	"strconv"
	"testing"
)

// fillBenchHLL is bench/harness' HLLSetup (the PFCOUNT case of make
// bench): 20 PFADDs of 1,000 distinct elements, a dense HLL.
func fillBenchHLL(e *execer, key []byte) {
	pfadd := e.cmd("pfadd")
	for i := 0; i < 20000; i += 1000 {
		args := [][]byte{[]byte("pfadd"), key}
		for j := i; j < i+1000; j++ {
			args = append(args, []byte("e:"+strconv.Itoa(j)))
		}
		e.run(pfadd, args...)
	}
}

// TestPFCountUsesCache: PFCOUNT of one key answers from the cached
// cardinality in the HLL header while its valid bit is set, as Redis'
// pfcountCommand (HLL_VALID_CACHE): a planted cache value is what comes
// back, and a PFADD that changes a register makes it count again.
func TestPFCountUsesCache(t *testing.T) {
	e := newExecer(t)
	key := []byte("hll:filled")
	fillBenchHLL(e, key)
	pfcount, getrange, setrange := e.cmd("pfcount"), e.cmd("getrange"), e.cmd("setrange")
	count := func() string { return string(e.run(pfcount, []byte("pfcount"), key)) }
	first := count()
	if first[0] != ':' {
		t.Fatalf("PFCOUNT = %q", first)
	}
	hdr := string(e.run(getrange, []byte("getrange"), key, []byte("0"), []byte("15")))
	if want := "$16\r\nHYLL\x00"; hdr[:len(want)] != want || hdr[5+15]&0x80 != 0 {
		t.Fatalf("header after PFCOUNT = %q, want dense with a valid cache", hdr)
	}
	// Cardinality 4242, little endian, the valid bit (byte 15's top) clear.
	planted := []byte{0x92, 0x10, 0, 0, 0, 0, 0, 0}
	e.run(setrange, []byte("setrange"), key, []byte("8"), planted)
	if got := count(); got != ":4242\r\n" {
		t.Fatalf("PFCOUNT with a planted cache = %q, want :4242 (the cache is not read)", got)
	}
	e.run(e.cmd("pfadd"), []byte("pfadd"), key, []byte("a new element"), []byte("and another"))
	if got := count(); got == ":4242\r\n" {
		t.Fatalf("PFCOUNT after PFADD = %q: the cache was not invalidated", got)
	}
}

// BenchmarkPFCountFilled is make bench's PFCOUNT case: one dense HLL of
// 20,000 elements whose cached cardinality is valid on every call.
func BenchmarkPFCountFilled(b *testing.B) {
	e := newExecer(b)
	key := []byte("hll:filled")
	fillBenchHLL(e, key)
	pfcount := e.cmd("pfcount")
	args := [][]byte{[]byte("pfcount"), key}
	e.run(pfcount, args...)
	b.ReportAllocs()
	cpu := benchProcessCPU()
	for b.Loop() {
		e.run(pfcount, args...)
	}
	b.ReportMetric(float64(benchProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
}
