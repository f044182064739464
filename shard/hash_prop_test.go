package shard

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/values"
)

// Small thresholds so that random operations cross the compact -> full
// conversion often.
var propLimits = keyspace.EncodingLimits{
	HashMaxListpackEntries: 6,
	HashMaxListpackValue:   5,
	SetMaxIntsetEntries:    6,
	ZSetMaxListpackEntries: 128,
	ZSetMaxListpackValue:   64,
	ListMaxListpackSize:    -2,
	StreamNodeMaxEntries:   100,
}

// propHash is the reference model of one hash key: its fields and whether
// Redis would have converted it to a hash table by now.
type propHash struct {
	fields    map[string]string
	hashtable bool
}

// TestHashModel runs random hash commands through the real handlers (two
// shards, so some keys share one) and compares every reply, the final
// contents, the encodings and the memory accounting with a model.
func TestHashModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rt, table := newTestRuntime(t, 2, RunToCompletion)
			rt.SetEncodingLimits(propLimits)
			p := newProducer(rt, table)
			r := rand.New(rand.NewPCG(seed, 99))
			model := map[string]*propHash{}
			keys := []string{"h0", "h1", "h2", "h3"}
			lim := &propLimits
			long := func(s string) bool { return int64(len(s)) > lim.HashMaxListpackValue }
			field := func() string {
				if r.IntN(8) == 0 {
					return "longfield" + strconv.Itoa(r.IntN(4))
				}
				return "f" + strconv.Itoa(r.IntN(12))
			}
			value := func() string {
				return strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(8))
			}
			get := func(k string) *propHash {
				h := model[k]
				if h == nil {
					h = &propHash{fields: map[string]string{}}
					model[k] = h
				}
				return h
			}
			// afterWrite applies Redis' entry-count rule and drops empty keys.
			afterWrite := func(k string) {
				h := model[k]
				if int64(len(h.fields)) > lim.HashMaxListpackEntries {
					h.hashtable = true
				}
				if len(h.fields) == 0 {
					delete(model, k)
				}
			}
			for step := range 3000 {
				k := keys[r.IntN(len(keys))]
				ctx := fmt.Sprintf("step %d", step)
				switch op := r.IntN(14); op {
				case 0, 1: // HSET
					args := []string{"HSET", k}
					h := get(k)
					created := 0
					var pairs [][2]string
					for range 1 + r.IntN(3) {
						f, v := field(), value()
						args = append(args, f, v)
						pairs = append(pairs, [2]string{f, v})
						if long(f) || long(v) {
							h.hashtable = true
						}
					}
					for _, pv := range pairs {
						if _, ok := h.fields[pv[0]]; !ok {
							created++
						}
						h.fields[pv[0]] = pv[1]
						if int64(len(h.fields)) > lim.HashMaxListpackEntries {
							h.hashtable = true
						}
					}
					hpWantInt(t, ctx, p.do(args...), int64(created))
					afterWrite(k)
				case 2: // HSETNX
					f, v := field(), value()
					h := get(k)
					_, exists := h.fields[f]
					if !exists {
						h.fields[f] = v
						if long(f) || long(v) {
							h.hashtable = true
						}
					}
					hpWantInt(t, ctx, p.do("HSETNX", k, f, v), map[bool]int64{true: 0, false: 1}[exists])
					afterWrite(k)
				case 3: // HDEL
					args := []string{"HDEL", k}
					n := 0
					h := get(k)
					for range 1 + r.IntN(3) {
						f := field()
						args = append(args, f)
						if _, ok := h.fields[f]; ok {
							delete(h.fields, f)
							n++
						}
					}
					hpWantInt(t, ctx, p.do(args...), int64(n))
					afterWrite(k)
				case 4: // HGET / HEXISTS / HSTRLEN
					f := field()
					var v string
					var ok bool
					if h := model[k]; h != nil {
						v, ok = h.fields[f]
					}
					got := p.do("HGET", k, f)
					if ok {
						hpWantBulk(t, ctx, got, v)
					} else if !got.Null {
						t.Fatalf("%s: HGET %s %s = %v, want nil", ctx, k, f, got)
					}
					hpWantInt(t, ctx, p.do("HEXISTS", k, f), map[bool]int64{true: 1, false: 0}[ok])
					hpWantInt(t, ctx, p.do("HSTRLEN", k, f), int64(len(v)))
				case 5: // HMGET
					fs := []string{field(), field(), field()}
					got := p.do(append([]string{"HMGET", k}, fs...)...)
					for i, f := range fs {
						var v string
						var ok bool
						if h := model[k]; h != nil {
							v, ok = h.fields[f]
						}
						if e := got.Elems[i]; e.Null != !ok || ok && string(e.Str) != v {
							t.Fatalf("%s: HMGET %s: element %d = %v, want %q (present %v)", ctx, k, i, e, v, ok)
						}
					}
				case 6: // HLEN
					n := 0
					if h := model[k]; h != nil {
						n = len(h.fields)
					}
					hpWantInt(t, ctx, p.do("HLEN", k), int64(n))
				case 7: // HINCRBY on a numeric field
					f := "n" + strconv.Itoa(r.IntN(3))
					by := int64(r.IntN(2000) - 1000)
					h := get(k)
					cur, _ := strconv.ParseInt(h.fields[f], 10, 64)
					cur += by
					h.fields[f] = strconv.FormatInt(cur, 10)
					if long(h.fields[f]) {
						h.hashtable = true
					}
					hpWantInt(t, ctx, p.do("HINCRBY", k, f, strconv.FormatInt(by, 10)), cur)
					afterWrite(k)
				case 8: // HGETALL / HKEYS / HVALS
					want := map[string]string{}
					if h := model[k]; h != nil {
						want = h.fields
					}
					got := p.do("HGETALL", k)
					if len(got.Elems) != 2*len(want) {
						t.Fatalf("%s: HGETALL %s has %d elements, want %d", ctx, k, len(got.Elems), 2*len(want))
					}
					for i := 0; i < len(got.Elems); i += 2 {
						if v, ok := want[string(got.Elems[i].Str)]; !ok || v != string(got.Elems[i+1].Str) {
							t.Fatalf("%s: HGETALL %s: %q=%q not in the model", ctx, k, got.Elems[i].Str, got.Elems[i+1].Str)
						}
					}
					hpWantSet(t, ctx, p.do("HKEYS", k), slices.Collect(maps.Keys(want)))
					hpWantSet(t, ctx, p.do("HVALS", k), slices.Collect(maps.Values(want)))
				case 9: // HRANDFIELD with a count
					h := model[k]
					count := r.IntN(12) - 6
					withValues := r.IntN(2) == 0
					args := []string{"HRANDFIELD", k, strconv.Itoa(count)}
					if withValues {
						args = append(args, "WITHVALUES")
					}
					got := p.do(args...)
					size := 0
					if h != nil {
						size = len(h.fields)
					}
					want := min(count, size)
					if count < 0 && size > 0 {
						want = -count
					}
					if count < 0 && size == 0 {
						want = 0
					}
					step := 1
					if withValues {
						step = 2
					}
					if len(got.Elems) != want*step {
						t.Fatalf("%s: %v: %d elements, want %d", ctx, args, len(got.Elems), want*step)
					}
					seen := map[string]bool{}
					for i := 0; i < len(got.Elems); i += step {
						f := string(got.Elems[i].Str)
						v, ok := h.fields[f]
						if !ok || withValues && string(got.Elems[i+1].Str) != v {
							t.Fatalf("%s: %v returned %q, not in the model", ctx, args, f)
						}
						if count > 0 && seen[f] {
							t.Fatalf("%s: %v returned %q twice", ctx, args, f)
						}
						seen[f] = true
					}
				case 10: // HSCAN to the end: every field exactly as in the model
					want := map[string]string{}
					if h := model[k]; h != nil {
						want = h.fields
					}
					got := map[string]string{}
					if !scanToEnd(p, r, "HSCAN", k, 4, 100, func(page []resp.Value) {
						for i := 0; i < len(page); i += 2 {
							got[string(page[i].Str)] = string(page[i+1].Str)
						}
					}, nil) {
						t.Fatalf("%s: HSCAN %s does not end", ctx, k)
					}
					if !maps.Equal(got, want) {
						t.Fatalf("%s: HSCAN %s = %v, want %v", ctx, k, got, want)
					}
				case 11: // OBJECT ENCODING follows Redis' rules
					want := "(nil bulk)"
					if h := model[k]; h != nil {
						want = `"listpack"`
						if h.hashtable {
							want = `"hashtable"`
						}
					}
					if got := p.do("OBJECT", "ENCODING", k).String(); got != want {
						t.Fatalf("%s: OBJECT ENCODING %s = %s, want %s", ctx, k, got, want)
					}
				case 12: // DEL now and then, so keys restart small
					if r.IntN(10) == 0 {
						_, ok := model[k]
						delete(model, k)
						hpWantInt(t, ctx, p.do("DEL", k), map[bool]int64{true: 1, false: 0}[ok])
					}
				case 13:
					checkValueMemory(t, rt)
				}
			}
			for _, k := range keys {
				n := 0
				if h := model[k]; h != nil {
					n = len(h.fields)
				}
				hpWantInt(t, "final", p.do("HLEN", k), int64(n))
			}
			checkValueMemory(t, rt)
		})
	}
}

// TestHashScanGuarantee interleaves HSCAN calls with writes on a hash-table
// hash: every field present for the whole scan must be returned.
func TestHashScanGuarantee(t *testing.T) {
	rt, table := newTestRuntime(t, 1, RunToCompletion)
	rt.SetEncodingLimits(propLimits)
	p := newProducer(rt, table)
	r := rand.New(rand.NewPCG(7, 7))
	for round := range 200 {
		p.do("DEL", "h")
		present := map[string]bool{}
		for i := range 20 + r.IntN(60) {
			f := "f" + strconv.Itoa(i)
			p.do("HSET", "h", f, "v")
			present[f] = true
		}
		stable := maps.Clone(present) // present from start to end
		seen := map[string]bool{}
		if !scanToEnd(p, r, "HSCAN", "h", 5, 1000, func(page []resp.Value) {
			for i := 0; i < len(page); i += 2 {
				seen[string(page[i].Str)] = true
			}
		}, func() {
			for range r.IntN(4) {
				f := "f" + strconv.Itoa(r.IntN(150))
				if r.IntN(2) == 0 {
					p.do("HDEL", "h", f)
					delete(present, f)
					delete(stable, f)
				} else {
					p.do("HSET", "h", f, "v")
					present[f] = true
				}
			}
		}) {
			t.Fatalf("round %d: the scan does not end", round)
		}
		for f := range stable {
			if !seen[f] {
				t.Fatalf("round %d: %s was present for the whole scan but not returned", round, f)
			}
		}
	}
	checkValueMemory(t, rt)
}

// scanToEnd calls cmd (HSCAN or SSCAN) on key, with a random COUNT from 1 to
// maxCount, from cursor 0 until the cursor is 0 again, handing each reply's
// elements to page and, when between is not nil, calling it after each call
// that did not end the scan. It reports false when the scan has not ended
// after maxCalls+2 calls.
func scanToEnd(p *producer, r *rand.Rand, cmd, key string, maxCount, maxCalls int, page func([]resp.Value), between func()) bool {
	cursor := "0"
	for calls := 0; ; calls++ {
		v := p.do(cmd, key, cursor, "COUNT", strconv.Itoa(1+r.IntN(maxCount)))
		cursor = string(v.Elems[0].Str)
		page(v.Elems[1].Elems)
		if cursor == "0" {
			return true
		}
		if calls > maxCalls {
			return false
		}
		if between != nil {
			between()
		}
	}
}

// checkValueMemory checks, holding each shard, that every database's memory
// counter equals a recount of its keys, and each htable's own invariants
// (the incremental mem equals a recount).
func checkValueMemory(t *testing.T, rt *Runtime) {
	t.Helper()
	for i, s := range rt.shards {
		release := rt.HoldShard(i)
		for n, d := range s.store.DBs() {
			if err := d.VerifyValueWords(); err != nil {
				release()
				t.Fatalf("shard %d db %d: %v", i, n, err)
			}
			var sum int64
			for k, pos := range d.Index() {
				o := d.Slot(pos)
				sum += int64(len(k)+keyspace.ObjectOverhead) + o.ValueMemory()
				if ht, ok := o.Coll().(*values.HTable); ok {
					if err := ht.Verify(); err != nil {
						release()
						t.Fatalf("shard %d db %d key %q: %v", i, n, k, err)
					}
				}
				if o.Enc == keyspace.EncListpack && o.Kind == keyspace.KindHash && keyspace.HashLen(o) == 0 ||
					(o.Kind == keyspace.KindHash || o.Kind == keyspace.KindSet) && o.Enc != keyspace.EncListpack && o.Enc != keyspace.EncIntset && o.Enc != keyspace.EncHashtable {
					release()
					t.Fatalf("shard %d db %d key %q: empty or badly encoded (enc %d)", i, n, k, o.Enc)
				}
				if o.Kind == keyspace.KindSet && keyspace.SetLen(o) == 0 {
					release()
					t.Fatalf("shard %d db %d key %q: an empty set was kept", i, n, k)
				}
				if o.Enc == keyspace.EncListpack && o.Kind == keyspace.KindSet {
					if err := values.VerifyListpack(o.Bytes(), true); err != nil {
						release()
						t.Fatalf("shard %d db %d key %q: %v", i, n, k, err)
					}
				}
				if o.Enc == keyspace.EncIntset {
					if err := values.VerifyIntset(o.Bytes()); err != nil {
						release()
						t.Fatalf("shard %d db %d key %q: %v", i, n, k, err)
					}
				}
			}
			if got := d.Memory(); got != sum {
				release()
				t.Fatalf("shard %d db %d: memory counter %d, recount %d", i, n, got, sum)
			}
		}
		release()
	}
}

func hpWantInt(t *testing.T, ctx string, v resp.Value, want int64) {
	t.Helper()
	if v.Type != ':' || v.Int != want {
		t.Fatalf("%s: got %v, want :%d", ctx, v, want)
	}
}

func hpWantBulk(t *testing.T, ctx string, v resp.Value, want string) {
	t.Helper()
	if v.Type != '$' || v.Null || string(v.Str) != want {
		t.Fatalf("%s: got %v, want %q", ctx, v, want)
	}
}

// hpWantSet checks that v is an array (or set) holding want in any order.
func hpWantSet(t *testing.T, ctx string, v resp.Value, want []string) {
	t.Helper()
	got := make([]string, len(v.Elems))
	for i, e := range v.Elems {
		got[i] = string(e.Str)
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %q, want %q", ctx, got, want)
	}
}
