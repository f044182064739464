package shard

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/commands"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// propSet is the reference model of one set key: its members and its
// encoding by Redis' rules (7.0's, plus 7.2's listpack when the limits
// allow one).
type propSet struct {
	members map[string]bool
	enc     string // "intset", "listpack" or "hashtable"
}

// setEncOf is the encoding a set built by adding ms (in any order, never
// removing) ends in under lim.
func setEncOf(ms map[string]bool, lim *keyspace.EncodingLimits) string {
	if allInts(ms) && int64(len(ms)) <= lim.SetMaxIntsetEntries {
		return "intset"
	}
	if fitsSetListpack(ms, len(ms), lim) {
		return "listpack"
	}
	return "hashtable"
}

// fitsSetListpack reports whether n members, ms among them, fit a listpack.
func fitsSetListpack(ms map[string]bool, n int, lim *keyspace.EncodingLimits) bool {
	if int64(n) > lim.SetMaxListpackEntries {
		return false
	}
	for m := range ms {
		if int64(len(m)) > lim.SetMaxListpackValue {
			return false
		}
	}
	return true
}

func isIntMember(m string) bool {
	_, ok := resp.ParseInt([]byte(m))
	return ok
}

// allInts reports whether every member is an integer to an intset.
func allInts(ms map[string]bool) bool {
	for m := range ms {
		if !isIntMember(m) {
			return false
		}
	}
	return true
}

// TestSetModel runs random set commands (single- and multi-key, on two
// shards so that multi-key commands often span both) through the real
// handlers and compares every reply, the final contents, the encodings and
// the memory accounting with a model.
//
// It runs twice: with Redis 7.0's encodings only (no set listpack), and with
// Redis 7.2's listpack for small sets of strings, whose limits (4 members of
// at most 3 bytes) the random members cross often.
func TestSetModel(t *testing.T) {
	withListpack := propLimits
	withListpack.SetMaxListpackEntries, withListpack.SetMaxListpackValue = 4, 3
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} {
		limits := propLimits
		if seed > 4 {
			limits = withListpack
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rt, table := newTestRuntime(t, 2, RunToCompletion)
			rt.SetEncodingLimits(limits)
			p := newProducer(rt, table)
			r := rand.New(rand.NewPCG(seed, 5))
			lim := &limits
			model := map[string]*propSet{}
			keys := []string{"s0", "s1", "s2", "s3", "s4"}
			member := func() string {
				switch r.IntN(6) {
				case 0:
					return "m" + strconv.Itoa(r.IntN(6))
				case 1:
					return strconv.Itoa(r.IntN(3)*1_000_000_000_000 - 1_000_000_000_000 + r.IntN(3))
				case 2:
					return strconv.Itoa(40000 + r.IntN(3))
				}
				return strconv.Itoa(r.IntN(14) - 4)
			}
			key := func() string { return keys[r.IntN(len(keys))] }
			members := func(k string) map[string]bool {
				if s := model[k]; s != nil {
					return s.members
				}
				return map[string]bool{}
			}
			// add applies setTypeAdd's encoding rules (Redis 7.2's).
			add := func(s *propSet, m string) bool {
				if s.members[m] {
					return false
				}
				old := len(s.members)
				switch {
				case s.enc == "intset" && isIntMember(m):
					if int64(old+1) > lim.SetMaxIntsetEntries {
						s.enc = "hashtable"
					}
				case s.enc == "intset" || s.enc == "listpack":
					s.enc = "hashtable"
					if int64(old) < lim.SetMaxListpackEntries && fitsSetListpack(s.members, old, lim) && int64(len(m)) <= lim.SetMaxListpackValue {
						s.enc = "listpack"
					}
				}
				s.members[m] = true
				return true
			}
			// create is setTypeCreate for a key about to get args members.
			create := func(k, first string, args int) *propSet {
				s := &propSet{members: map[string]bool{}, enc: "hashtable"}
				switch {
				case isIntMember(first):
					s.enc = "intset"
				case int64(args) <= lim.SetMaxListpackEntries && int64(len(first)) <= lim.SetMaxListpackValue:
					s.enc = "listpack"
				}
				model[k] = s
				return s
			}
			// result is a set built as Redis builds a STORE result.
			result := func(ms map[string]bool) *propSet {
				if len(ms) == 0 {
					return nil
				}
				return &propSet{members: ms, enc: setEncOf(ms, lim)}
			}
			store := func(dst string, s *propSet) {
				if s == nil {
					delete(model, dst)
				} else {
					model[dst] = s
				}
			}
			drop := func(k string) {
				if s := model[k]; s != nil && len(s.members) == 0 {
					delete(model, k)
				}
			}
			for step := range 4000 {
				ctx := fmt.Sprintf("step %d", step)
				k := key()
				switch op := r.IntN(16); op {
				case 0, 1: // SADD
					args := []string{"SADD", k}
					var ms []string
					for range 1 + r.IntN(3) {
						ms = append(ms, member())
					}
					s := model[k]
					if s == nil {
						s = create(k, ms[0], len(ms))
					}
					n := 0
					for _, m := range ms {
						if add(s, m) {
							n++
						}
					}
					hpWantInt(t, ctx, p.do(append(args, ms...)...), int64(n))
				case 2: // SREM
					args := []string{"SREM", k}
					n := 0
					for range 1 + r.IntN(3) {
						m := member()
						args = append(args, m)
						if s := model[k]; s != nil && s.members[m] {
							delete(s.members, m)
							n++
						}
					}
					drop(k)
					hpWantInt(t, ctx, p.do(args...), int64(n))
				case 3: // SISMEMBER / SMISMEMBER / SCARD
					m := member()
					hpWantInt(t, ctx, p.do("SISMEMBER", k, m), map[bool]int64{true: 1, false: 0}[members(k)[m]])
					ms := []string{member(), member()}
					got := p.do("SMISMEMBER", k, ms[0], ms[1])
					for i, m := range ms {
						hpWantInt(t, ctx, got.Elems[i], map[bool]int64{true: 1, false: 0}[members(k)[m]])
					}
					hpWantInt(t, ctx, p.do("SCARD", k), int64(len(members(k))))
				case 4: // SMEMBERS: ascending for an intset
					got := p.do("SMEMBERS", k)
					hpWantSet(t, ctx, got, slices.Collect(maps.Keys(members(k))))
					if s := model[k]; s != nil && s.enc == "intset" {
						if !slices.IsSortedFunc(got.Elems, func(a, b resp.Value) int {
							x, _ := strconv.ParseInt(string(a.Str), 10, 64)
							y, _ := strconv.ParseInt(string(b.Str), 10, 64)
							return int(min(max(x-y, -1), 1))
						}) {
							t.Fatalf("%s: SMEMBERS %s of an intset is not ascending: %v", ctx, k, got)
						}
					}
				case 5: // SPOP
					s := model[k]
					got := p.do("SPOP", k)
					if s == nil {
						if !got.Null {
							t.Fatalf("%s: SPOP %s = %v, want nil", ctx, k, got)
						}
						break
					}
					if !s.members[string(got.Str)] {
						t.Fatalf("%s: SPOP %s = %v, not a member", ctx, k, got)
					}
					delete(s.members, string(got.Str))
					drop(k)
				case 6: // SPOP with a count
					s := model[k]
					count := r.IntN(8)
					got := p.do("SPOP", k, strconv.Itoa(count))
					if s == nil {
						if len(got.Elems) != 0 {
							t.Fatalf("%s: SPOP %s %d = %v, want empty", ctx, k, count, got)
						}
						break
					}
					size := len(s.members)
					if len(got.Elems) != min(count, size) {
						t.Fatalf("%s: SPOP %s %d returned %d of %d", ctx, k, count, len(got.Elems), size)
					}
					for _, e := range got.Elems {
						if !s.members[string(e.Str)] {
							t.Fatalf("%s: SPOP %s %d returned %q, not a member (or twice)", ctx, k, count, e.Str)
						}
						delete(s.members, string(e.Str))
					}
					if remaining := size - count; count > 0 && remaining > 0 && remaining*commands.SPopMoveStrategyMul <= count {
						// The survivors were moved into a new set.
						if allInts(s.members) && int64(len(s.members)) <= lim.SetMaxIntsetEntries {
							s.enc = "intset"
						}
					}
					drop(k)
				case 7: // SRANDMEMBER with a count
					ms := members(k)
					count := r.IntN(12) - 6
					got := p.do("SRANDMEMBER", k, strconv.Itoa(count))
					want := min(count, len(ms))
					if count < 0 {
						want = -count
					}
					if len(ms) == 0 {
						want = 0
					}
					if len(got.Elems) != want {
						t.Fatalf("%s: SRANDMEMBER %s %d returned %d", ctx, k, count, len(got.Elems))
					}
					seen := map[string]bool{}
					for _, e := range got.Elems {
						if !ms[string(e.Str)] || count > 0 && seen[string(e.Str)] {
							t.Fatalf("%s: SRANDMEMBER %s %d returned %q: not a member, or twice", ctx, k, count, e.Str)
						}
						seen[string(e.Str)] = true
					}
				case 8: // SMOVE
					src, dst, m := k, key(), member()
					ss, ds := model[src], model[dst]
					want := int64(0)
					switch {
					case ss == nil || !ss.members[m]:
					case src == dst:
						want = 1
					default:
						want = 1
						delete(ss.members, m)
						drop(src)
						if ds == nil {
							ds = create(dst, m, 1)
						}
						add(ds, m)
					}
					hpWantInt(t, ctx, p.do("SMOVE", src, dst, m), want)
				case 9, 10: // SINTER / SUNION / SDIFF and their STORE forms
					n := 1 + r.IntN(3)
					var srcs []string
					for range n {
						srcs = append(srcs, key())
					}
					var res map[string]bool
					name := []string{"SINTER", "SUNION", "SDIFF"}[r.IntN(3)]
					switch name {
					case "SINTER":
						res = maps.Clone(members(srcs[0]))
						for _, o := range srcs[1:] {
							maps.DeleteFunc(res, func(m string, _ bool) bool { return !members(o)[m] })
						}
					case "SUNION":
						res = map[string]bool{}
						for _, o := range srcs {
							maps.Copy(res, members(o))
						}
					case "SDIFF":
						res = maps.Clone(members(srcs[0]))
						for _, o := range srcs[1:] {
							if o == srcs[0] {
								clear(res)
							}
							maps.DeleteFunc(res, func(m string, _ bool) bool { return members(o)[m] })
						}
					}
					if op == 9 {
						hpWantSet(t, ctx, p.do(append([]string{name}, srcs...)...), slices.Collect(maps.Keys(res)))
						if name == "SINTER" {
							got := p.do(append([]string{"SINTERCARD", strconv.Itoa(n)}, srcs...)...)
							hpWantInt(t, ctx, got, int64(len(res)))
							limit := r.IntN(4)
							got = p.do(append(append([]string{"SINTERCARD", strconv.Itoa(n)}, srcs...), "LIMIT", strconv.Itoa(limit))...)
							want := len(res)
							if limit > 0 {
								want = min(want, limit)
							}
							hpWantInt(t, ctx, got, int64(want))
						}
						break
					}
					dst := key()
					rs := result(res)
					if name == "SDIFF" && rs != nil && diffUsesCopy(srcs, model) {
						// Redis' second SDIFF algorithm adds the whole first set first.
						rs.enc = setEncOf(members(srcs[0]), lim)
					}
					hpWantInt(t, ctx, p.do(append([]string{name + "STORE", dst}, srcs...)...), int64(len(res)))
					store(dst, rs)
				case 11: // SSCAN to the end
					want := members(k)
					got := map[string]bool{}
					if !scanToEnd(p, r, "SSCAN", k, 4, 100, func(page []resp.Value) {
						for _, e := range page {
							got[string(e.Str)] = true
						}
					}, nil) {
						t.Fatalf("%s: SSCAN %s does not end", ctx, k)
					}
					if !maps.Equal(got, want) {
						t.Fatalf("%s: SSCAN %s = %v, want %v", ctx, k, got, want)
					}
				case 12: // OBJECT ENCODING follows Redis' rules
					want := "(nil bulk)"
					if s := model[k]; s != nil {
						want = `"hashtable"` // also for a listpack, as Redis 7.0 answers
						if s.enc == "intset" {
							want = `"intset"`
						}
					}
					if got := p.do("OBJECT", "ENCODING", k).String(); got != want {
						t.Fatalf("%s: OBJECT ENCODING %s = %s, want %s (members %v)", ctx, k, got, want, members(k))
					}
				case 13:
					if r.IntN(10) == 0 {
						_, ok := model[k]
						delete(model, k)
						hpWantInt(t, ctx, p.do("DEL", k), map[bool]int64{true: 1, false: 0}[ok])
					}
				case 14:
					checkValueMemory(t, rt)
					checkSetEncodings(t, ctx, rt, model)
				case 15: // SRANDMEMBER and SPOP never leave a set inconsistent
					if s := model[k]; s != nil {
						got := p.do("SRANDMEMBER", k)
						if !s.members[string(got.Str)] {
							t.Fatalf("%s: SRANDMEMBER %s = %v, not a member", ctx, k, got)
						}
					}
				}
			}
			for _, k := range keys {
				hpWantSet(t, "final", p.do("SMEMBERS", k), slices.Collect(maps.Keys(members(k))))
			}
			checkValueMemory(t, rt)
		})
	}
}

// checkSetEncodings compares each set's real encoding with the model's.
func checkSetEncodings(t *testing.T, ctx string, rt *Runtime, model map[string]*propSet) {
	t.Helper()
	names := map[keyspace.Encoding]string{keyspace.EncIntset: "intset", keyspace.EncListpack: "listpack", keyspace.EncHashtable: "hashtable"}
	for i, s := range rt.shards {
		release := rt.HoldShard(i)
		for k, pos := range s.store.DBs()[0].Index() {
			want := model[k]
			if got := names[s.store.DBs()[0].Slot(pos).Enc]; want != nil && got != want.enc {
				release()
				t.Fatalf("%s: set %s is a %s, the model says %s (members %v)", ctx, k, got, want.enc, want.members)
			}
		}
		release()
	}
}

// diffUsesCopy reports whether Redis' SDIFF picks its second algorithm (copy
// the first set, then remove) for these sources.
func diffUsesCopy(srcs []string, model map[string]*propSet) bool {
	first := model[srcs[0]]
	if first == nil {
		return false
	}
	for _, o := range srcs[1:] {
		if o == srcs[0] {
			return false
		}
	}
	var one, two int64
	for _, o := range srcs {
		if s := model[o]; s != nil {
			one += int64(len(first.members))
			two += int64(len(s.members))
		}
	}
	return one/2 > two
}

// TestSetScanGuarantee interleaves SSCAN calls with writes on a hash-table
// set: every member present for the whole scan must be returned.
func TestSetScanGuarantee(t *testing.T) {
	rt, table := newTestRuntime(t, 1, RunToCompletion)
	rt.SetEncodingLimits(propLimits)
	p := newProducer(rt, table)
	r := rand.New(rand.NewPCG(8, 8))
	for round := range 200 {
		p.do("DEL", "s")
		stable := map[string]bool{}
		for i := range 20 + r.IntN(60) {
			m := "m" + strconv.Itoa(i)
			p.do("SADD", "s", m)
			stable[m] = true
		}
		seen := map[string]bool{}
		if !scanToEnd(p, r, "SSCAN", "s", 5, 1000, func(page []resp.Value) {
			for _, e := range page {
				seen[string(e.Str)] = true
			}
		}, func() {
			for range r.IntN(4) {
				m := "m" + strconv.Itoa(r.IntN(150))
				switch r.IntN(7) {
				case 6: // pop most members: Redis' few-survivors path
					n := hpSize(t, p.do("SCARD", "s"))
					for _, e := range p.do("SPOP", "s", strconv.Itoa(n-n/6)).Elems {
						delete(stable, string(e.Str))
					}
				case 0, 3:
					p.do("SREM", "s", m)
					delete(stable, m)
				case 1, 4:
					if v := p.do("SPOP", "s"); !v.Null {
						delete(stable, string(v.Str))
					}
				default:
					p.do("SADD", "s", m)
				}
			}
		}) {
			t.Fatalf("round %d: the scan does not end", round)
		}
		for m := range stable {
			if !seen[m] {
				t.Fatalf("round %d: %s was present for the whole scan but not returned", round, m)
			}
		}
	}
	checkValueMemory(t, rt)
}

func hpSize(t *testing.T, v resp.Value) int {
	t.Helper()
	if v.Type != ':' {
		t.Fatalf("not an integer: %v", v)
	}
	return int(v.Int)
}
