package shard

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/values"
)

// ---- expected replies -------------------------------------------------------------

func zvBulk(s string) resp.Value  { return resp.Value{Type: '$', Str: []byte(s)} }
func zvInt(n int64) resp.Value    { return resp.Value{Type: ':', Int: n} }
func zvNil() resp.Value           { return resp.Value{Type: '$', Null: true} }
func zvNilArr() resp.Value        { return resp.Value{Type: '*', Null: true} }
func zvErr(msg string) resp.Value { return resp.Value{Type: '-', Str: []byte(msg)} }
func zvArr(e ...resp.Value) resp.Value {
	if e == nil {
		e = []resp.Value{}
	}
	return resp.Value{Type: '*', Int: int64(len(e)), Elems: e}
}

// zfmtScore is a RESP2 double as Redis 7.0 writes it (%.17g).
func zfmtScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

func zvScore(f float64) resp.Value { return zvBulk(zfmtScore(f)) }

// ---- the model --------------------------------------------------------------------

// zmodel is the reference for one sorted set key: its members and whether
// Redis would hold it as a skiplist by now.
type zmodel struct {
	m        map[string]float64
	skiplist bool
}

type zmPair struct {
	m string
	s float64
}

func (z *zmodel) sorted() []zmPair {
	out := make([]zmPair, 0, len(z.m))
	for m, s := range z.m {
		out = append(out, zmPair{m, s})
	}
	slices.SortFunc(out, func(a, b zmPair) int {
		if a.s != b.s {
			return cmp.Compare(a.s, b.s)
		}
		return strings.Compare(a.m, b.m)
	})
	return out
}

// rankRange is ps from rank start to end inclusive, negative ranks counting
// from the end, clamped as Redis does (nil when the range is empty).
func rankRange(ps []zmPair, start, end int64) []zmPair {
	s, e, empty := clampRange(int(start), int(end), len(ps))
	if empty {
		return nil
	}
	return ps[s : e+1]
}

// set stores a score as the encoding would keep it (a listpack turns -0
// into 0).
func (z *zmodel) set(m string, s float64) {
	if !z.skiplist && s == 0 {
		s = 0
	}
	z.m[m] = s
}

func pairsValue(ps []zmPair, withScores bool) resp.Value {
	var e []resp.Value
	for _, p := range ps {
		e = append(e, zvBulk(p.m))
		if withScores {
			e = append(e, zvScore(p.s))
		}
	}
	return zvArr(e...)
}

var zpropLimits = keyspace.EncodingLimits{
	HashMaxListpackEntries: 512,
	HashMaxListpackValue:   64,
	SetMaxIntsetEntries:    512,
	ZSetMaxListpackEntries: 8,
	ZSetMaxListpackValue:   6,
	ListMaxListpackSize:    -2,
	StreamNodeMaxEntries:   100,
}

var zpropScores = []float64{-2, -1, math.Copysign(0, -1), 0, 0.5, 1, 1.5, 2, 3, 1e300, math.Inf(1), math.Inf(-1)}

func zfmtArg(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0 && math.Signbit(f):
		return "-0"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// TestZSetAgainstModel runs random sorted set commands through the real
// handlers (two shards, keys spread over both) and compares every reply,
// the encodings, the final contents and the memory accounting with a model.
func TestZSetAgainstModel(t *testing.T) {
	seeds, steps := 8, 12000
	if testing.Short() {
		seeds, steps = 3, 1500
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runZSetModel(t, uint64(seed), steps)
		})
	}
}

func runZSetModel(t *testing.T, seed uint64, steps int) {
	rt, table := newTestRuntime(t, 2, RunToCompletion)
	lim := zpropLimits
	rt.SetEncodingLimits(lim)
	p := newProducer(rt, table)
	r := rand.New(rand.NewPCG(seed, 7))
	keys := []string{"z0", "z1", "z2", "{z}a", "{z}b"}
	model := map[string]*zmodel{}
	get := func(k string) *zmodel {
		z := model[k]
		if z == nil {
			z = &zmodel{m: map[string]float64{}}
			model[k] = z
		}
		return z
	}
	// created applies Redis' rule for a new key's first encoding.
	created := func(z *zmodel, first string) {
		if len(z.m) == 0 {
			z.skiplist = lim.ZSetMaxListpackEntries == 0 || int64(len(first)) > lim.ZSetMaxListpackValue
		}
	}
	// adding applies ZSetAdd's conversion rule before a new member goes in.
	adding := func(z *zmodel, m string) {
		if !z.skiplist && (int64(len(z.m))+1 > lim.ZSetMaxListpackEntries || int64(len(m)) > lim.ZSetMaxListpackValue) {
			z.skiplist = true
		}
	}
	drop := func(k string) {
		if z := model[k]; z != nil && len(z.m) == 0 {
			delete(model, k)
		}
	}
	// stored replaces k with a result, encoded by its size.
	stored := func(k string, res map[string]float64) {
		delete(model, k)
		if len(res) == 0 {
			return
		}
		z := get(k)
		maxLen := 0
		for m := range res {
			maxLen = max(maxLen, len(m))
		}
		z.skiplist = int64(len(res)) > lim.ZSetMaxListpackEntries || int64(maxLen) > lim.ZSetMaxListpackValue
		for m, s := range res {
			z.set(m, s)
		}
	}
	member := func() string {
		if r.IntN(10) == 0 {
			return "longmember" + strconv.Itoa(r.IntN(3))
		}
		return "m" + strconv.Itoa(r.IntN(16))
	}
	score := func() float64 { return zpropScores[r.IntN(len(zpropScores))] }
	bound := func() (string, float64, bool) {
		f := zpropScores[r.IntN(len(zpropScores))]
		if r.IntN(3) == 0 {
			return "(" + zfmtArg(f), f, true
		}
		return zfmtArg(f), f, false
	}
	inRange := func(s, min, max float64, minex, maxex bool) bool {
		return (minex && s > min || !minex && s >= min) && (maxex && s < max || !maxex && s <= max)
	}
	check := func(ctx string, got, want resp.Value) {
		t.Helper()
		if got.String() != want.String() {
			t.Fatalf("seed %d %s:\n got  %s\n want %s", seed, ctx, got, want)
		}
	}
	do := func(args ...string) (resp.Value, string) {
		return p.do(args...), strings.Join(args, " ")
	}

	for step := range steps {
		k := keys[r.IntN(len(keys))]
		switch op := r.IntN(22); op {
		case 0, 1, 2: // ZADD with options
			var flags []string
			nx, xx, gt, lt, ch, incr := false, false, false, false, false, false
			switch r.IntN(6) {
			case 1:
				nx = true
				flags = append(flags, "NX")
			case 2:
				xx = true
				flags = append(flags, "XX")
			}
			if !nx {
				switch r.IntN(5) {
				case 1:
					gt = true
					flags = append(flags, "GT")
				case 2:
					lt = true
					flags = append(flags, "LT")
				}
			}
			if r.IntN(3) == 0 {
				ch = true
				flags = append(flags, "CH")
			}
			n := 1 + r.IntN(4)
			if r.IntN(5) == 0 {
				incr, n = true, 1
				flags = append(flags, "INCR")
			}
			args := append([]string{"ZADD", k}, flags...)
			type pr struct {
				s float64
				m string
			}
			var prs []pr
			for range n {
				pp := pr{score(), member()}
				prs = append(prs, pp)
				args = append(args, zfmtArg(pp.s), pp.m)
			}
			got, ctx := do(args...)
			z := model[k]
			if z == nil && xx {
				if incr {
					check(ctx, got, zvNil())
				} else {
					check(ctx, got, zvInt(0))
				}
				continue
			}
			z = get(k)
			created(z, prs[0].m)
			var added, updated, processed int64
			var last float64
			nan := false
			for _, pp := range prs {
				cur, exists := z.m[pp.m]
				if exists {
					if nx {
						continue
					}
					s := pp.s
					if incr {
						s += cur
						if math.IsNaN(s) {
							nan = true
							break
						}
					}
					if lt && s >= cur || gt && s <= cur {
						continue
					}
					processed++
					last = s // the reply is the computed score, whatever is stored
					if s != cur {
						z.set(pp.m, s)
						updated++
					}
					continue
				}
				if xx {
					continue
				}
				adding(z, pp.m)
				z.set(pp.m, pp.s)
				added++
				processed++
				last = pp.s
			}
			drop(k)
			switch {
			case nan:
				check(ctx, got, zvErr("ERR resulting score is not a number (NaN)"))
			case incr && processed > 0:
				check(ctx, got, zvScore(last))
			case incr:
				check(ctx, got, zvNil())
			case ch:
				check(ctx, got, zvInt(added+updated))
			default:
				check(ctx, got, zvInt(added))
			}
		case 3: // ZINCRBY
			m, by := member(), score()
			got, ctx := do("ZINCRBY", k, zfmtArg(by), m)
			z := get(k)
			created(z, m)
			cur, exists := z.m[m]
			s := cur + by
			if !exists {
				s = by
			}
			if math.IsNaN(s) {
				drop(k)
				check(ctx, got, zvErr("ERR resulting score is not a number (NaN)"))
				continue
			}
			if !exists {
				adding(z, m)
			}
			if !exists || s != cur {
				z.set(m, s)
			}
			check(ctx, got, zvScore(s))
		case 4: // ZREM
			args := []string{"ZREM", k}
			var n int64
			z := model[k]
			seen := map[string]bool{}
			for range 1 + r.IntN(3) {
				m := member()
				args = append(args, m)
				if z != nil && !seen[m] {
					if _, ok := z.m[m]; ok {
						n++
						seen[m] = true
					}
				}
			}
			got, ctx := do(args...)
			if z != nil {
				for m := range seen {
					delete(z.m, m)
				}
				drop(k)
			}
			check(ctx, got, zvInt(n))
		case 5: // ZSCORE, ZMSCORE, ZCARD, ZRANK, ZREVRANK
			z := model[k]
			m := member()
			got, ctx := do("ZSCORE", k, m)
			s, ok := 0.0, false
			if z != nil {
				s, ok = z.m[m]
			}
			if ok {
				check(ctx, got, zvScore(s))
			} else {
				check(ctx, got, zvNil())
			}
			m2 := member()
			got, ctx = do("ZMSCORE", k, m, m2)
			var want []resp.Value
			for _, x := range []string{m, m2} {
				if s, ok := 0.0, false; z != nil {
					if s, ok = z.m[x]; ok {
						want = append(want, zvScore(s))
						continue
					}
				}
				want = append(want, zvNil())
			}
			check(ctx, got, zvArr(want...))
			got, ctx = do("ZCARD", k)
			if z == nil {
				check(ctx, got, zvInt(0))
			} else {
				check(ctx, got, zvInt(int64(len(z.m))))
			}
			for _, rev := range []bool{false, true} {
				name := "ZRANK"
				if rev {
					name = "ZREVRANK"
				}
				got, ctx = do(name, k, m)
				want := zvNil()
				if z != nil {
					for i, p := range z.sorted() {
						if p.m == m {
							if rev {
								i = len(z.m) - 1 - i
							}
							want = zvInt(int64(i))
						}
					}
				}
				check(ctx, got, want)
			}
		case 6: // ZRANGE by rank
			start, end := int64(r.IntN(14)-7), int64(r.IntN(14)-7)
			rev, ws := r.IntN(2) == 0, r.IntN(2) == 0
			args := []string{"ZRANGE", k, strconv.FormatInt(start, 10), strconv.FormatInt(end, 10)}
			if rev {
				args = append(args, "REV")
			}
			if ws {
				args = append(args, "WITHSCORES")
			}
			got, ctx := do(args...)
			var ps []zmPair
			if z := model[k]; z != nil {
				ps = z.sorted()
			}
			if rev {
				slices.Reverse(ps)
			}
			check(ctx, got, pairsValue(rankRange(ps, start, end), ws))
		case 7, 8: // ZRANGE BYSCORE (and the old commands), LIMIT
			minA, min, minex := bound()
			maxA, max, maxex := bound()
			rev, ws := r.IntN(2) == 0, r.IntN(2) == 0
			var args []string
			switch r.IntN(2) {
			case 0:
				args = []string{"ZRANGE", k, minA, maxA, "BYSCORE"}
				if rev {
					args = []string{"ZRANGE", k, maxA, minA, "BYSCORE", "REV"}
				}
			default:
				args = []string{"ZRANGEBYSCORE", k, minA, maxA}
				if rev {
					args = []string{"ZREVRANGEBYSCORE", k, maxA, minA}
				}
			}
			if ws {
				args = append(args, "WITHSCORES")
			}
			offset, limit := int64(0), int64(-1)
			if r.IntN(2) == 0 {
				offset, limit = int64(r.IntN(6)-1), int64(r.IntN(6)-1)
				args = append(args, "LIMIT", strconv.FormatInt(offset, 10), strconv.FormatInt(limit, 10))
			}
			got, ctx := do(args...)
			var sel []zmPair
			if z := model[k]; z != nil {
				ps := z.sorted()
				if rev {
					slices.Reverse(ps)
				}
				for _, p := range ps {
					if inRange(p.s, min, max, minex, maxex) {
						sel = append(sel, p)
					}
				}
				switch {
				case offset < 0 || offset >= int64(len(sel)):
					sel = nil
				default:
					sel = sel[offset:]
				}
				if limit >= 0 && int64(len(sel)) > limit {
					sel = sel[:limit]
				}
			}
			check(ctx, got, pairsValue(sel, ws))
			got, ctx = do("ZCOUNT", k, minA, maxA)
			var cnt int64
			if z := model[k]; z != nil {
				for _, s := range z.m {
					if inRange(s, min, max, minex, maxex) {
						cnt++
					}
				}
			}
			check(ctx, got, zvInt(cnt))
		case 9: // lex commands on a key whose members all score 0
			lk := "lex" + strconv.Itoa(r.IntN(2))
			lexBound := func() (string, string, int) { // arg, value, kind (-1 "-", +1 "+", 0 value)
				switch r.IntN(6) {
				case 0:
					return "-", "", -1
				case 1:
					return "+", "", 1
				}
				v := member()
				if r.IntN(2) == 0 {
					return "(" + v, v, 0
				}
				return "[" + v, v, 0
			}
			// Fill it now and then.
			if r.IntN(3) == 0 {
				args := []string{"ZADD", lk}
				z := get(lk)
				for range 1 + r.IntN(5) {
					m := member()
					args = append(args, "0", m)
					created(z, m)
					if _, ok := z.m[m]; !ok {
						adding(z, m)
						z.set(m, 0)
					}
				}
				p.do(args...)
			}
			minA, minV, minK := lexBound()
			maxA, maxV, maxK := lexBound()
			gte := func(m string) bool {
				switch minK {
				case -1:
					return true
				case 1:
					return false
				}
				if minA[0] == '(' {
					return m > minV
				}
				return m >= minV
			}
			lte := func(m string) bool {
				switch maxK {
				case -1:
					return false
				case 1:
					return true
				}
				if maxA[0] == '(' {
					return m < maxV
				}
				return m <= maxV
			}
			var sel []zmPair
			if z := model[lk]; z != nil {
				for _, p := range z.sorted() {
					if gte(p.m) && lte(p.m) {
						sel = append(sel, p)
					}
				}
			}
			got, ctx := do("ZLEXCOUNT", lk, minA, maxA)
			check(ctx, got, zvInt(int64(len(sel))))
			rev := r.IntN(2) == 0
			var args []string
			if rev {
				args = []string{"ZREVRANGEBYLEX", lk, maxA, minA}
				slices.Reverse(sel)
			} else {
				args = []string{"ZRANGE", lk, minA, maxA, "BYLEX"}
			}
			if r.IntN(2) == 0 {
				offset, limit := int64(r.IntN(5)), int64(r.IntN(6)-1)
				args = append(args, "LIMIT", strconv.FormatInt(offset, 10), strconv.FormatInt(limit, 10))
				if offset >= int64(len(sel)) {
					sel = nil
				} else {
					sel = sel[offset:]
				}
				if limit >= 0 && int64(len(sel)) > limit {
					sel = sel[:limit]
				}
			}
			got, ctx = do(args...)
			check(ctx, got, pairsValue(sel, false))
			if r.IntN(4) == 0 {
				got, ctx = do("ZREMRANGEBYLEX", lk, minA, maxA)
				var n int64
				if z := model[lk]; z != nil {
					for m := range z.m {
						if gte(m) && lte(m) {
							delete(z.m, m)
							n++
						}
					}
					drop(lk)
				}
				check(ctx, got, zvInt(n))
			}
		case 10, 11: // ZPOPMIN, ZPOPMAX, ZMPOP, BZPOPMIN, BZMPOP
			maxEnd := r.IntN(2) == 0
			z := model[k]
			var ps []zmPair
			if z != nil {
				ps = z.sorted()
				if maxEnd {
					slices.Reverse(ps)
				}
			}
			pop := func(n int) []zmPair {
				n = min(n, len(ps))
				out := ps[:n]
				for _, p := range out {
					delete(z.m, p.m)
				}
				drop(k)
				return out
			}
			which := "MIN"
			if maxEnd {
				which = "MAX"
			}
			switch r.IntN(4) {
			case 0:
				count := r.IntN(5) - 1
				args := []string{"ZPOP" + which, k}
				if count >= 0 {
					args = append(args, strconv.Itoa(count))
				}
				got, ctx := do(args...)
				if count < 0 {
					count = 1
				}
				if z == nil {
					check(ctx, got, zvArr())
					continue
				}
				check(ctx, got, pairsValue(pop(count), true))
			case 1:
				count := 1 + r.IntN(4)
				other := keys[r.IntN(len(keys))]
				for other[0] == '{' != (k[0] == '{') || other == k {
					other = keys[r.IntN(len(keys))]
				}
				got, ctx := do("ZMPOP", "2", other, k, which, "COUNT", strconv.Itoa(count))
				if oz := model[other]; oz != nil {
					// The first key has members: redo the model on it.
					k, z = other, oz
					ps = z.sorted()
					if maxEnd {
						slices.Reverse(ps)
					}
				}
				if z == nil {
					check(ctx, got, zvNilArr())
					continue
				}
				var e []resp.Value
				for _, p := range pop(count) {
					e = append(e, zvArr(zvBulk(p.m), zvScore(p.s)))
				}
				check(ctx, got, zvArr(zvBulk(k), zvArr(e...)))
			default:
				if z == nil {
					continue // it would block
				}
				got, ctx := do("BZPOP"+which, k, "0")
				pp := pop(1)[0]
				check(ctx, got, zvArr(zvBulk(k), zvBulk(pp.m), zvScore(pp.s)))
			}
		case 12: // ZREMRANGEBYRANK, ZREMRANGEBYSCORE
			z := model[k]
			if r.IntN(2) == 0 {
				start, end := int64(r.IntN(12)-6), int64(r.IntN(12)-6)
				got, ctx := do("ZREMRANGEBYRANK", k, strconv.FormatInt(start, 10), strconv.FormatInt(end, 10))
				var n int64
				if z != nil {
					for _, p := range rankRange(z.sorted(), start, end) {
						delete(z.m, p.m)
						n++
					}
					drop(k)
				}
				check(ctx, got, zvInt(n))
				continue
			}
			minA, min, minex := bound()
			maxA, max, maxex := bound()
			got, ctx := do("ZREMRANGEBYSCORE", k, minA, maxA)
			var n int64
			if z != nil {
				for m, s := range z.m {
					if inRange(s, min, max, minex, maxex) {
						delete(z.m, m)
						n++
					}
				}
				drop(k)
			}
			check(ctx, got, zvInt(n))
		case 13, 14: // set operations
			ktag := k[0] == '{'
			pick := func() string {
				for {
					x := keys[r.IntN(len(keys))]
					if x[0] == '{' == ktag {
						return x
					}
				}
			}
			n := 1 + r.IntN(3)
			srcs := []string{k}
			for len(srcs) < n {
				srcs = append(srcs, pick())
			}
			op := r.IntN(3)
			weights := make([]float64, n)
			for i := range weights {
				weights[i] = 1
			}
			agg := "SUM"
			var opts []string
			if op != 2 && r.IntN(2) == 0 {
				opts = append(opts, "WEIGHTS")
				for i := range weights {
					weights[i] = []float64{1, 2, -1, 0, 0.5}[r.IntN(5)]
					opts = append(opts, zfmtArg(weights[i]))
				}
			}
			if op != 2 && r.IntN(2) == 0 {
				agg = []string{"SUM", "MIN", "MAX"}[r.IntN(3)]
				opts = append(opts, "AGGREGATE", agg)
			}
			res := zmodelSetOp(model, srcs, weights, agg, op)
			name := []string{"ZUNION", "ZINTER", "ZDIFF"}[op]
			if r.IntN(2) == 0 {
				dst := pick()
				args := append(append([]string{name + "STORE", dst, strconv.Itoa(n)}, srcs...), opts...)
				got, ctx := do(args...)
				check(ctx, got, zvInt(int64(len(res))))
				stored(dst, res)
				continue
			}
			ws := r.IntN(2) == 0
			args := append(append([]string{name, strconv.Itoa(n)}, srcs...), opts...)
			if ws {
				args = append(args, "WITHSCORES")
			}
			got, ctx := do(args...)
			tmp := &zmodel{m: res, skiplist: true}
			check(ctx, got, pairsValue(tmp.sorted(), ws))
			if op == 1 {
				got, ctx = do(append([]string{"ZINTERCARD", strconv.Itoa(n)}, srcs...)...)
				check(ctx, got, zvInt(int64(len(res))))
			}
		case 15: // ZRANGESTORE
			ktag := k[0] == '{'
			dst := keys[r.IntN(len(keys))]
			for dst[0] == '{' != ktag {
				dst = keys[r.IntN(len(keys))]
			}
			start, end := int64(r.IntN(10)-3), int64(r.IntN(10)-3)
			got, ctx := do("ZRANGESTORE", dst, k, strconv.FormatInt(start, 10), strconv.FormatInt(end, 10))
			res := map[string]float64{}
			if z := model[k]; z != nil {
				for _, p := range rankRange(z.sorted(), start, end) {
					res[p.m] = p.s
				}
			}
			check(ctx, got, zvInt(int64(len(res))))
			stored(dst, res)
		case 16: // ZRANDMEMBER
			z := model[k]
			count := r.IntN(24) - 12
			got, ctx := do("ZRANDMEMBER", k, strconv.Itoa(count), "WITHSCORES")
			if z == nil || count == 0 {
				check(ctx, got, zvArr())
				continue
			}
			ps := z.sorted()
			if count >= len(ps) {
				slices.Reverse(ps)
				check(ctx, got, pairsValue(ps, true))
				continue
			}
			want := count
			if want < 0 {
				want = -want
			}
			if len(got.Elems) != 2*want {
				t.Fatalf("%s: %d elements, want %d", ctx, len(got.Elems), 2*want)
			}
			seen := map[string]bool{}
			for i := 0; i < len(got.Elems); i += 2 {
				m := string(got.Elems[i].Str)
				s, ok := z.m[m]
				if !ok || string(got.Elems[i+1].Str) != zfmtScore(s) {
					t.Fatalf("%s: %s %s is not a member", ctx, m, got.Elems[i+1].Str)
				}
				if count > 0 && seen[m] {
					t.Fatalf("%s: %s twice", ctx, m)
				}
				seen[m] = true
			}
		case 17: // ZSCAN to the end
			z := model[k]
			count := 1 + r.IntN(5)
			seen := map[string]string{}
			cursor := "0"
			for range 1000 {
				got, ctx := do("ZSCAN", k, cursor, "COUNT", strconv.Itoa(count))
				if got.Type != '*' || len(got.Elems) != 2 {
					t.Fatalf("%s: %s", ctx, got)
				}
				cursor = string(got.Elems[0].Str)
				items := got.Elems[1].Elems
				for i := 0; i+1 < len(items); i += 2 {
					m := string(items[i].Str)
					if _, dup := seen[m]; dup {
						t.Fatalf("%s: %s returned twice", ctx, m)
					}
					seen[m] = string(items[i+1].Str)
				}
				if cursor == "0" {
					break
				}
			}
			n := 0
			if z != nil {
				n = len(z.m)
				for m, s := range z.m {
					var want []byte
					if z.skiplist {
						want = values.AppendD2String(nil, s)
					} else {
						want = values.AppendListpackScore(nil, s)
					}
					if seen[m] != string(want) {
						t.Fatalf("ZSCAN %s: %s scored %q, want %q", k, m, seen[m], want)
					}
				}
			}
			if len(seen) != n {
				t.Fatalf("ZSCAN %s: %d members, want %d", k, len(seen), n)
			}
		case 18: // OBJECT ENCODING, TYPE
			got, ctx := do("OBJECT", "ENCODING", k)
			switch z := model[k]; {
			case z == nil:
				check(ctx, got, zvNil())
			case z.skiplist:
				check(ctx, got, zvBulk("skiplist"))
			default:
				check(ctx, got, zvBulk("listpack"))
			}
		case 19: // COPY
			dst := keys[r.IntN(len(keys))]
			for dst[0] == '{' != (k[0] == '{') || dst == k {
				dst = keys[r.IntN(len(keys))]
			}
			got, ctx := do("COPY", k, dst, "REPLACE")
			z := model[k]
			if z == nil {
				check(ctx, got, zvInt(0))
				continue
			}
			check(ctx, got, zvInt(1))
			c := &zmodel{m: map[string]float64{}, skiplist: z.skiplist}
			for m, s := range z.m {
				c.m[m] = s
			}
			model[dst] = c
		case 20: // DEL now and then, so keys start over
			if r.IntN(4) == 0 {
				p.do("DEL", k)
				delete(model, k)
			}
		case 21: // the whole contents
			got, ctx := do("ZRANGE", k, "0", "-1", "WITHSCORES")
			var ps []zmPair
			if z := model[k]; z != nil {
				ps = z.sorted()
			}
			check(ctx, got, pairsValue(ps, true))
		}
		if step%500 == 0 {
			zcheckMemory(t, rt)
		}
	}
	for _, k := range append(keys, "lex0", "lex1") {
		var ps []zmPair
		if z := model[k]; z != nil {
			ps = z.sorted()
		}
		if got := p.do("ZRANGE", k, "0", "-1", "WITHSCORES"); got.String() != pairsValue(ps, true).String() {
			t.Fatalf("final %s: got %s want %s", k, got, pairsValue(ps, true))
		}
	}
	zcheckMemory(t, rt)
}

// zmodelSetOp is the model of ZUNION (op 0), ZINTER (1) and ZDIFF (2): the
// inputs are taken smallest first (stable), as Redis does for union and
// inter, so scores are aggregated in the same order.
func zmodelSetOp(model map[string]*zmodel, srcs []string, weights []float64, agg string, op int) map[string]float64 {
	type in struct {
		z *zmodel
		w float64
	}
	var ins []in
	for i, k := range srcs {
		ins = append(ins, in{model[k], weights[i]})
	}
	size := func(x in) int {
		if x.z == nil {
			return 0
		}
		return len(x.z.m)
	}
	if op != 2 {
		slices.SortStableFunc(ins, func(a, b in) int { return size(a) - size(b) })
	}
	aggregate := func(t *float64, v float64) {
		switch agg {
		case "SUM":
			*t += v
			if math.IsNaN(*t) {
				*t = 0
			}
		case "MIN":
			if v < *t {
				*t = v
			}
		case "MAX":
			if v > *t {
				*t = v
			}
		}
	}
	res := map[string]float64{}
	switch op {
	case 0:
		for _, x := range ins {
			if x.z == nil {
				continue
			}
			for m, s := range x.z.m {
				v := x.w * s
				if math.IsNaN(v) {
					v = 0
				}
				if cur, ok := res[m]; ok {
					aggregate(&cur, v)
					res[m] = cur
				} else {
					res[m] = v
				}
			}
		}
	case 1:
		if size(ins[0]) == 0 {
			return res
		}
	next:
		for m, s := range ins[0].z.m {
			v := ins[0].w * s
			if math.IsNaN(v) {
				v = 0
			}
			for _, x := range ins[1:] {
				if x.z == nil {
					continue next
				}
				o, ok := x.z.m[m]
				if !ok {
					continue next
				}
				aggregate(&v, o*x.w)
			}
			res[m] = v
		}
	case 2:
		if size(ins[0]) == 0 {
			return res
		}
		for _, x := range ins[1:] {
			if x.z == ins[0].z {
				return res
			}
		}
	diff:
		for m, s := range ins[0].z.m {
			for _, x := range ins[1:] {
				if x.z != nil {
					if _, ok := x.z.m[m]; ok {
						continue diff
					}
				}
			}
			res[m] = s
		}
	}
	return res
}

// zcheckMemory checks, holding each shard, that every database's memory
// counter equals a recount of its keys, and every skiplist's invariants.
func zcheckMemory(t *testing.T, rt *Runtime) {
	t.Helper()
	for i, s := range rt.shards {
		rt.acquire(s)
		for n, d := range s.store.DBs() {
			var sum int64
			for k, pos := range d.Index() {
				o := d.Slot(pos)
				sum += int64(len(k)+keyspace.ObjectOverhead) + o.ValueMemory()
				if o.Kind != keyspace.KindZSet {
					continue
				}
				var err error
				switch {
				case o.Enc == keyspace.EncSkiplist:
					err = o.Coll().(*values.Skiplist).Verify()
				case o.Enc != keyspace.EncListpack:
					err = fmt.Errorf("encoding %d", o.Enc)
				case values.ZlLen(o.Bytes()) == 0:
					err = fmt.Errorf("empty listpack kept")
				default:
					err = zlCheck(o.Bytes())
				}
				if err != nil {
					rt.release(s)
					t.Fatalf("shard %d db %d key %q: %v", i, n, k, err)
				}
			}
			if got := d.Memory(); got != sum {
				rt.release(s)
				t.Fatalf("shard %d db %d: memory counter %d, recount %d", i, n, got, sum)
			}
		}
		rt.release(s)
	}
}

// zlCheck verifies a sorted set listpack: pairs in (score, member) order,
// no -0 score.
func zlCheck(lp []byte) error {
	var prevM []byte
	prevS := math.Inf(-1)
	for off, i := 4, 0; off < len(lp); i++ {
		m, s, next := values.ZlAt(lp, off)
		if s == 0 && math.Signbit(s) {
			return fmt.Errorf("pair %d: -0 score in a listpack", i)
		}
		if i > 0 && (s < prevS || s == prevS && string(m) <= string(prevM)) {
			return fmt.Errorf("pair %d (%q %v) out of order after (%q %v)", i, m, s, prevM, prevS)
		}
		prevM, prevS, off = m, s, next
	}
	return nil
}

// ---- blocking ------------------------------------------------------------------------

func TestZSetBlocking(t *testing.T) {
	rt, table := newTestRuntime(t, 4, RunToCompletion)
	p := newProducer(rt, table)

	// Served at once when a key has members.
	p.do("ZADD", "ready", "1", "a", "2", "b")
	if got := parkClient(t, rt, p, "BZPOPMAX", "nokey", "ready", "0").reply(t); got != `["ready" "b" "2"]` {
		t.Fatalf("BZPOPMAX: %s", got)
	}

	// Two waiters on keys of different shards: the first to block is served
	// first, and each gets one member.
	a := parkClient(t, rt, p, "BZPOPMIN", "k1", "k2", "0")
	b := parkClient(t, rt, p, "BZPOPMIN", "k2", "0")
	a.none(t)
	b.none(t)
	p.do("ZADD", "k2", "5", "x", "6", "y")
	if got := a.reply(t); got != `["k2" "x" "5"]` {
		t.Fatalf("first waiter: %s", got)
	}
	if got := b.reply(t); got != `["k2" "y" "6"]` {
		t.Fatalf("second waiter: %s", got)
	}
	if got := p.do("EXISTS", "k2"); got.Int != 0 {
		t.Fatal("k2 should be gone: both members were popped")
	}

	// BZMPOP takes COUNT members; a key of another type does not wake it.
	m := parkClient(t, rt, p, "BZMPOP", "0", "2", "m1", "m2", "MAX", "COUNT", "2")
	p.do("SET", "m1", "string")
	m.none(t)
	p.do("ZADD", "m2", "1", "a", "2", "b", "3", "c")
	if got := m.reply(t); got != `["m2" [["c" "3"] ["b" "2"]]]` {
		t.Fatalf("BZMPOP: %s", got)
	}

	// ZUNIONSTORE creating a key wakes a waiter on it.
	u := parkClient(t, rt, p, "BZPOPMIN", "{u}dst", "0")
	p.do("ZADD", "{u}src", "7", "z")
	p.do("ZUNIONSTORE", "{u}dst", "1", "{u}src")
	if got := u.reply(t); got != `["{u}dst" "z" "7"]` {
		t.Fatalf("after ZUNIONSTORE: %s", got)
	}

	// The timeout replies a null array.
	if got := parkClient(t, rt, p, "BZPOPMIN", "never", "0.03").reply(t); got != "(nil array)" {
		t.Fatalf("timeout: %s", got)
	}
	if got := parkClient(t, rt, p, "BZMPOP", "0.03", "1", "never", "MIN").reply(t); got != "(nil array)" {
		t.Fatalf("BZMPOP timeout: %s", got)
	}
}

// TestZSetCopyIsDeep checks that COPY of a skiplist shares nothing.
func TestZSetCopyIsDeep(t *testing.T) {
	rt, table := newTestRuntime(t, 1, RunToCompletion)
	rt.SetEncodingLimits(zpropLimits)
	p := newProducer(rt, table)
	for i := range 20 {
		p.do("ZADD", "src", strconv.Itoa(i), "m"+strconv.Itoa(i))
	}
	p.do("COPY", "src", "dst")
	p.do("ZADD", "src", "100", "m0")
	p.do("ZREM", "src", "m1")
	if got := p.do("ZRANGE", "dst", "0", "1", "WITHSCORES").String(); got != `["m0" "0" "m1" "1"]` {
		t.Fatalf("copy changed with its source: %s", got)
	}
	zcheckMemory(t, rt)
	p.do("DEL", "src", "dst")
	zcheckMemory(t, rt)
}
