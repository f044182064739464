package shard

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/svcdb/svcdb/shard/keyspace"
)

// stringObject returns key's object in db 0 (after the commands that built it
// have completed) and the shard's memory figure.
func stringObject(t testing.TB, rt *Runtime, key string) (*keyspace.Object, int64) {
	t.Helper()
	d := rt.shards[rt.ShardOf([]byte(key))].store.DBs()[0]
	o, _ := d.Find([]byte(key))
	if o == nil {
		t.Fatalf("%s: missing", key)
	}
	return o, d.Memory()
}

func TestStringCapFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct{ need, want int }{
		{1, 2},
		{100, 200},
		{mb - 1, 2*mb - 2}, // below SDS_MAX_PREALLOC: doubles, as sds
		{mb, 2 * mb},       // from there: +max(1 MiB, need/2)
		{3 * mb, 4*mb + mb/2},
		{8 * mb, 12 * mb},
		{300 * mb, 450 * mb},
		{400 * mb, keyspace.MaxStringLen}, // never past the longest string
		{keyspace.MaxStringLen, keyspace.MaxStringLen},
	} {
		if got := keyspace.StringCapFor(c.need); got != c.want {
			t.Errorf("stringCapFor(%d) = %d; want %d", c.need, got, c.want)
		}
	}
}

// TestAppendGrowthPolicy follows a string's capacity across APPENDs: it grows
// only when the string outgrows it, to StringCapFor of the new length, and
// the shard's memory figure counts the capacity, not the length.
func TestAppendGrowthPolicy(t *testing.T) {
	rt, table := newTestRuntime(t, 1, RunToCompletion)
	p := newProducer(rt, table)
	p.do("SET", "s", "ab")
	o, _ := stringObject(t, rt, "s")
	if cap(o.Bytes()) != 2 {
		t.Fatalf("SET: cap %d; want 2", cap(o.Bytes()))
	}
	chunk := string(bytes.Repeat([]byte("x"), 300<<10))
	want, wantCap := "ab", 2
	for i := range 12 {
		add := "c"
		if i%2 == 1 {
			add = chunk
		}
		if r := p.do("APPEND", "s", add); r.Int != int64(len(want)+len(add)) {
			t.Fatalf("APPEND %d: reply %+v; want %d", i, r, len(want)+len(add))
		}
		want += add
		if len(want) > wantCap {
			wantCap = keyspace.StringCapFor(len(want))
		}
		o, mem := stringObject(t, rt, "s")
		if cap(o.Bytes()) != wantCap || string(o.Bytes()) != want {
			t.Fatalf("after APPEND %d (len %d): cap %d; want %d (content ok: %v)", i, len(want), cap(o.Bytes()), wantCap, string(o.Bytes()) == want)
		}
		if wantMem := int64(len("s")+keyspace.ObjectOverhead) + int64(wantCap); mem != wantMem {
			t.Fatalf("after APPEND %d: memory %d; want %d (capacity counted)", i, mem, wantMem)
		}
	}
	if got := p.do("GET", "s"); string(got.Str) != want {
		t.Fatalf("GET: %d bytes; want %d", len(got.Str), len(want))
	}
}

// TestSetRangeAppendGetRangeAcrossGrowth checks the bytes against a model
// while SETRANGE and APPEND grow a string past its capacity again and again,
// including SETRANGE into spare capacity a previous, longer value left
// behind (the gap must read as zeros, never as old bytes).
func TestSetRangeAppendGetRangeAcrossGrowth(t *testing.T) {
	rt, table := newTestRuntime(t, 1, RunToCompletion)
	p := newProducer(rt, table)
	var model []byte
	setrange := func(off int, val string) {
		t.Helper()
		if off+len(val) > len(model) {
			model = append(model, make([]byte, off+len(val)-len(model))...)
		}
		copy(model[off:], val)
		if r := p.do("SETRANGE", "k", strconv.Itoa(off), val); r.Int != int64(len(model)) {
			t.Fatalf("SETRANGE %d: %+v; want %d", off, r, len(model))
		}
	}
	check := func(what string) {
		t.Helper()
		if got := p.do("GET", "k"); !bytes.Equal(got.Str, model) {
			t.Fatalf("%s: GET differs from the model (len %d, want %d)", what, len(got.Str), len(model))
		}
		n := len(model)
		for _, r := range [][2]int{{0, -1}, {n / 3, n / 2}, {-10, -1}, {n - 1, n + 5}} {
			got := p.do("GETRANGE", "k", strconv.Itoa(r[0]), strconv.Itoa(r[1]))
			s, e := r[0], r[1]
			if s < 0 {
				s += n
			}
			if e < 0 {
				e += n
			}
			e = min(e, n-1)
			if want := model[s : e+1]; !bytes.Equal(got.Str, want) {
				t.Fatalf("%s: GETRANGE %d %d = %q...; want %q...", what, r[0], r[1], got.Str[:min(8, len(got.Str))], want[:min(8, len(want))])
			}
		}
	}
	setrange(5, "hello") // a new key: exactly 10 bytes
	if o, _ := stringObject(t, rt, "k"); cap(o.Bytes()) != 10 {
		t.Fatalf("SETRANGE on a new key: cap %d; want 10", cap(o.Bytes()))
	}
	check("new key")
	for i := range 20 {
		off := len(model) + i*4096
		setrange(off, "abc"+strconv.Itoa(i))
		if r := p.do("APPEND", "k", "tail"+strconv.Itoa(i)); r.Int != int64(len(model)+len("tail"+strconv.Itoa(i))) {
			t.Fatalf("APPEND: %+v", r)
		}
		model = append(model, "tail"+strconv.Itoa(i)...)
		setrange(i*7, "mid")
		check("step " + strconv.Itoa(i))
	}
	// A shorter SET keeps the buffer when it fits; the spare bytes still hold
	// the old value, and a SETRANGE past the end must not reveal them.
	long := bytes.Repeat([]byte("Z"), 64)
	p.do("SET", "k", string(long))
	p.do("SET", "k", string(long[:40]))
	model = append(model[:0], long[:40]...)
	setrange(50, "q")
	check("SETRANGE into spare capacity")
	if got := p.do("GETRANGE", "k", "40", "49"); !bytes.Equal(got.Str, make([]byte, 10)) {
		t.Fatalf("gap reads %q; want zeros", got.Str)
	}
}

// BenchmarkAppendGrowth appends to one key until it is 200 MiB (1 MiB
// chunks, the case) or 3.2 MB (64-byte chunks), then deletes it: the
// handler alone, where growth's copying dominates.
func BenchmarkAppendGrowth(b *testing.B) {
	for _, size := range []int{64, 1 << 20} {
		b.Run("chunk="+strconv.Itoa(size), func(b *testing.B) {
			rt, _ := newTestRuntime(b, 1, RunToCompletion)
			bc := newBenchCtx(b, rt, "APPEND", "k", string(bytes.Repeat([]byte("a"), size)))
			del := newBenchCtx(b, rt, "DEL", "k")
			steps := 200
			if size < 1<<20 {
				steps = 50000
			}
			b.SetBytes(int64(size * steps))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for range steps {
					bc.run(b)
				}
				del.run(b)
			}
		})
	}
}

// BenchmarkSetRangeLarge is SETRANGE at offset 512 MiB - 1 on a missing key
// (one 512 MiB allocation), then DEL.
func BenchmarkSetRangeLarge(b *testing.B) {
	rt, _ := newTestRuntime(b, 1, RunToCompletion)
	bc := newBenchCtx(b, rt, "SETRANGE", "k", strconv.Itoa(keyspace.MaxStringLen-1), "x")
	del := newBenchCtx(b, rt, "DEL", "k")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		bc.run(b)
		del.run(b)
	}
}
