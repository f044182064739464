package shard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/values"
)

// listModel is the reference the property test checks the handlers against:
// plain slices, one per key.
type listModel map[string][]string

// expected reply shapes, in resp.Value.String's form.
func eBulk(s string) string { return strconv.Quote(s) }
func eInt(n int) string     { return "(integer) " + strconv.Itoa(n) }
func eErr(s string) string  { return "(error) " + strconv.Quote(s) }
func eArr(elems ...string) string {
	return "[" + strings.Join(elems, " ") + "]"
}
func eBulks(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = eBulk(v)
	}
	return eArr(out...)
}

const (
	eNilBulk  = "(nil bulk)"
	eNilArray = "(nil array)"
	eOK       = `+"OK"`
)

func normIndex(i, n int) (int, bool) {
	if i < 0 {
		i += n
	}
	return i, i >= 0 && i < n
}

func clampRange(s, e, n int) (int, int, bool) {
	if s < 0 {
		s += n
	}
	if e < 0 {
		e += n
	}
	if s < 0 {
		s = 0
	}
	if s > e || s >= n {
		return 0, 0, true
	}
	if e >= n {
		e = n - 1
	}
	return s, e, false
}

func reversed(vs []string) []string {
	out := slices.Clone(vs)
	slices.Reverse(out)
	return out
}

// squeeze shortens runs of one repeated byte ("aaaaaaa" -> "a*7") so
// failures with long values stay readable.
func squeeze(s string) string {
	var sb strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if j-i > 6 {
			fmt.Fprintf(&sb, "%c*%d", s[i], j-i)
		} else {
			sb.WriteString(s[i:j])
		}
		i = j
	}
	return sb.String()
}

// checkQuicklist verifies a quicklist's invariants and that its memory
// equals a recount from scratch.
func checkQuicklist(t *testing.T, key string, q *values.Quicklist, want []string) {
	t.Helper()
	got, err := q.Verify()
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: quicklist holds\n%s; want\n%s", key, squeeze(fmt.Sprintf("%q", got)), squeeze(fmt.Sprintf("%q", want)))
	}
}

// checkListState compares every key with the model, checks the structures'
// invariants and that each DB's memory counter equals a recount.
func checkListState(t *testing.T, rt *Runtime, m listModel, keys []string, after ...string) {
	t.Helper()
	// Hold every shard while looking; release before failing (Fatal would
	// leave the tokens taken and Close waiting for them).
	for _, s := range rt.shards {
		rt.acquire(s)
	}
	ok := t.Run("state", func(t *testing.T) { checkListStateHeld(t, rt, m, keys) })
	for _, s := range rt.shards {
		rt.release(s)
	}
	if !ok {
		t.Fatalf("state check failed after %v", after)
	}
}

func checkListStateHeld(t *testing.T, rt *Runtime, m listModel, keys []string) {
	for _, s := range rt.shards {
		d := s.store.DBs()[0]
		var mem int64
		for k, pos := range d.Index() {
			o := d.Slot(pos)
			mem += int64(len(k)+keyspace.ObjectOverhead) + o.ValueMemory()
		}
		if got := d.Memory(); got != mem {
			t.Fatalf("shard %d: memory counter %d; a recount gives %d", s.id, got, mem)
		}
	}
	for _, k := range keys {
		s := rt.shards[rt.ShardOf([]byte(k))]
		o, _ := s.store.DBs()[0].Find([]byte(k))
		want := m[k]
		switch {
		case o == nil && len(want) > 0:
			t.Fatalf("%s: missing; want %q", k, want)
		case o != nil && len(want) == 0:
			t.Fatalf("%s: present (%d elements); want it deleted", k, keyspace.ListLen(o))
		case o != nil:
			if o.Kind != keyspace.KindList {
				t.Fatalf("%s: kind %v", k, o.Kind)
			}
			switch o.Enc {
			case keyspace.EncQuicklist:
				checkQuicklist(t, k, o.Coll().(*values.Quicklist), want)
			case keyspace.EncListpack:
				var got []string
				for _, e := range keyspace.ListElements(o) {
					got = append(got, string(e))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: listpack holds %s; want %s", k, squeeze(fmt.Sprintf("%q", got)), squeeze(fmt.Sprintf("%q", want)))
				}
			default:
				t.Fatalf("%s: encoding %d", k, o.Enc)
			}
		}
	}
}

func TestListProperties(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fill   int64
		maxVal int
		depth  int64 // list-compress-depth
	}{
		{"fill=1", 1, 20, 0},
		{"fill=3", 3, 20, 0},
		{"fill=5,bigvalues", 5, 3000, 0},
		{"fill=-1", -1, 300, 0},
		{"fill=-2", -2, 200, 0},
		{"fill=4,depth=1", 4, 40, 1},
		{"fill=3,depth=2", 3, 60, 2},
		{"fill=-1,depth=1", -1, 300, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt, table := newTestRuntime(t, 3, RunToCompletion)
			l := keyspace.DefaultEncodingLimits
			l.ListMaxListpackSize = tc.fill
			l.ListCompressDepth = tc.depth
			rt.SetEncodingLimits(l)
			p := newProducer(rt, table)
			r := rand.New(rand.NewPCG(uint64(tc.fill+100), 7))
			runListOps(t, rt, p, r, tc.maxVal, 6000)
		})
	}
}

// checkEvery is how often (in operations) the property test checks the
// whole state; 1 when hunting a failure.
var checkEvery = 1

func runListOps(t *testing.T, rt *Runtime, p *producer, r *rand.Rand, maxVal, ops int) {
	keys := []string{"a", "b", "c", "{x}d", "{x}e"}
	m := listModel{}
	// A small alphabet of values so LREM, LPOS and LINSERT find matches.
	vals := make([]string, 12)
	for i := range vals {
		n := r.IntN(maxVal + 1)
		if i < 4 {
			n = r.IntN(4)
		}
		vals[i] = strings.Repeat(string(rune('a'+i)), n)
	}
	val := func() string { return vals[r.IntN(len(vals))] }
	key := func() string { return keys[r.IntN(len(keys))] }
	idx := func(n int) int { return r.IntN(2*n+5) - n - 2 }
	side := func() (string, bool) {
		if r.IntN(2) == 0 {
			return "LEFT", true
		}
		return "RIGHT", false
	}
	pop := func(k string, front bool) string {
		l := m[k]
		var v string
		if front {
			v, m[k] = l[0], l[1:]
		} else {
			v, m[k] = l[len(l)-1], l[:len(l)-1]
		}
		return v
	}
	push := func(k, v string, front bool) {
		if front {
			m[k] = append([]string{v}, m[k]...)
		} else {
			m[k] = append(m[k], v)
		}
	}
	popN := func(k string, front bool, count int) []string {
		var out []string
		for range count {
			if len(m[k]) == 0 {
				break
			}
			out = append(out, pop(k, front))
		}
		return out
	}
	for op := range ops {
		k := key()
		n := len(m[k])
		var args []string
		var want string
		switch r.IntN(22) {
		case 0, 1, 2: // pushes weigh more so lists grow past the node limit
			cmd, front := "RPUSH", false
			if r.IntN(2) == 0 {
				cmd, front = "LPUSH", true
			}
			args = []string{cmd, k}
			for range 1 + r.IntN(8) {
				v := val()
				args = append(args, v)
				push(k, v, front)
			}
			want = eInt(len(m[k]))
		case 3:
			cmd, front := "RPUSHX", false
			if r.IntN(2) == 0 {
				cmd, front = "LPUSHX", true
			}
			v := val()
			args = []string{cmd, k, v}
			if n > 0 {
				push(k, v, front)
			}
			want = eInt(len(m[k]))
		case 4:
			cmd, front := "RPOP", false
			if r.IntN(2) == 0 {
				cmd, front = "LPOP", true
			}
			args = []string{cmd, k}
			if r.IntN(2) == 0 {
				count := r.IntN(6)
				args = append(args, strconv.Itoa(count))
				if n == 0 {
					want = eNilArray
				} else {
					want = eBulks(popN(k, front, count))
				}
			} else if n == 0 {
				want = eNilBulk
			} else {
				want = eBulk(pop(k, front))
			}
		case 5:
			args = []string{"LLEN", k}
			want = eInt(n)
		case 6, 7:
			s, e := idx(n), idx(n)
			if r.IntN(3) == 0 {
				s, e = 0, n-1
			}
			args = []string{"LRANGE", k, strconv.Itoa(s), strconv.Itoa(e)}
			if s, e, empty := clampRange(s, e, n); empty {
				want = "[]"
			} else {
				want = eBulks(m[k][s : e+1])
			}
		case 8:
			i := idx(n)
			args = []string{"LINDEX", k, strconv.Itoa(i)}
			if j, ok := normIndex(i, n); ok {
				want = eBulk(m[k][j])
			} else {
				want = eNilBulk
			}
		case 9:
			i, v := idx(n), val()
			args = []string{"LSET", k, strconv.Itoa(i), v}
			j, ok := normIndex(i, n)
			switch {
			case n == 0:
				want = eErr("ERR no such key")
			case !ok:
				want = eErr("ERR index out of range")
			default:
				m[k][j] = v
				want = eOK
			}
		case 10:
			pivot, v := val(), val()
			after := r.IntN(2) == 0
			where := "BEFORE"
			if after {
				where = "AFTER"
			}
			args = []string{"LINSERT", k, where, pivot, v}
			j := slices.Index(m[k], pivot)
			switch {
			case n == 0:
				want = eInt(0)
			case j < 0:
				want = eInt(-1)
			default:
				if after {
					j++
				}
				m[k] = slices.Insert(m[k], j, v)
				want = eInt(len(m[k]))
			}
		case 11:
			count, v := r.IntN(7)-3, val()
			args = []string{"LREM", k, strconv.Itoa(count), v}
			l := m[k]
			removed := 0
			if count >= 0 {
				var out []string
				for _, e := range l {
					if e == v && (count == 0 || removed < count) {
						removed++
						continue
					}
					out = append(out, e)
				}
				m[k] = out
			} else {
				var out []string
				for i := len(l) - 1; i >= 0; i-- {
					if l[i] == v && removed < -count {
						removed++
						continue
					}
					out = append(out, l[i])
				}
				m[k] = reversed(out)
			}
			want = eInt(removed)
		case 12:
			s, e := idx(n), idx(n)
			args = []string{"LTRIM", k, strconv.Itoa(s), strconv.Itoa(e)}
			if s, e, empty := clampRange(s, e, n); empty {
				m[k] = nil
			} else {
				m[k] = slices.Clone(m[k][s : e+1])
			}
			want = eOK
		case 13, 14:
			v := val()
			args = []string{"LPOS", k, v}
			rank, count, maxlen := 1, -1, 0
			if r.IntN(2) == 0 {
				rank = r.IntN(7) - 3
				if rank == 0 {
					rank = 1
				}
				args = append(args, "RANK", strconv.Itoa(rank))
			}
			if r.IntN(2) == 0 {
				count = r.IntN(4)
				args = append(args, "COUNT", strconv.Itoa(count))
			}
			if r.IntN(3) == 0 {
				maxlen = r.IntN(n + 2)
				args = append(args, "MAXLEN", strconv.Itoa(maxlen))
			}
			var found []string
			matches := 0
			for i := 0; i < n && (maxlen == 0 || i < maxlen); i++ {
				j := i
				if rank < 0 {
					j = n - 1 - i
				}
				if m[k][j] != v {
					continue
				}
				matches++
				if matches >= max(rank, -rank) {
					found = append(found, eInt(j))
					if count != -1 && count != 0 && len(found) >= count || count == -1 {
						break
					}
				}
			}
			switch {
			case count != -1:
				want = eArr(found...)
			case len(found) == 0:
				want = eNilBulk
			default:
				want = found[0]
			}
		case 15, 16:
			dst := key()
			from, fromFront := side()
			to, toFront := side()
			if r.IntN(4) == 0 {
				args = []string{"RPOPLPUSH", k, dst}
				fromFront, toFront = false, true
			} else {
				args = []string{"LMOVE", k, dst, from, to}
			}
			if n > 0 && r.IntN(4) == 0 {
				// The blocking forms serve at once when the source has data.
				if args[0] == "RPOPLPUSH" {
					args = []string{"BRPOPLPUSH", k, dst, "0"}
				} else {
					args = []string{"BLMOVE", k, dst, from, to, "0.01"}
				}
			}
			if n == 0 {
				want = eNilBulk
				break
			}
			v := pop(k, fromFront)
			push(dst, v, toFront)
			want = eBulk(v)
		case 17, 18:
			nk := 1 + r.IntN(3)
			args = []string{"LMPOP", strconv.Itoa(nk)}
			blocking := r.IntN(3) == 0
			if blocking {
				args = []string{"BLMPOP", "0.01", strconv.Itoa(nk)}
			}
			var ks []string
			for range nk {
				ks = append(ks, key())
			}
			if blocking && !slices.ContainsFunc(ks, func(k string) bool { return len(m[k]) > 0 }) {
				args = []string{"LMPOP", strconv.Itoa(nk)} // nothing to serve: it would wait
			}
			args = append(args, ks...)
			where, front := side()
			args = append(args, where)
			count := 1
			if r.IntN(2) == 0 {
				count = 1 + r.IntN(5)
				args = append(args, "COUNT", strconv.Itoa(count))
			}
			want = eNilArray
			for _, kk := range ks {
				if len(m[kk]) > 0 {
					want = eArr(eBulk(kk), eBulks(popN(kk, front, count)))
					break
				}
			}
		case 19, 20:
			cmd, front := "BRPOP", false
			if r.IntN(2) == 0 {
				cmd, front = "BLPOP", true
			}
			k2 := key()
			args = []string{cmd, k, k2, "0"}
			if len(m[k]) == 0 && len(m[k2]) == 0 {
				args[len(args)-1] = "0.001" // nothing to serve: a short wait
			}
			want = eNilArray
			for _, kk := range []string{k, k2} {
				if len(m[kk]) > 0 {
					want = eArr(eBulk(kk), eBulk(pop(kk, front)))
					break
				}
			}
		case 21:
			// DEL (and COPY) now and then keeps lists from growing without bound.
			if r.IntN(2) == 0 {
				dst := key()
				args = []string{"COPY", k, dst, "REPLACE"}
				switch {
				case dst == k:
					want = eErr("ERR source and destination objects are the same")
				case n == 0:
					want = eInt(0)
				default:
					m[dst] = slices.Clone(m[k])
					want = eInt(1)
				}
				break
			}
			if r.IntN(2) != 0 {
				continue
			}
			args = []string{"DEL", k}
			want = eInt(min(n, 1))
			delete(m, k)
		}
		got := p.do(args...).String()
		if got != want {
			t.Fatalf("op %d: %s\n got: %s\nwant: %s", op, squeeze(fmt.Sprintf("%q", args)), squeeze(got), squeeze(want))
		}
		for kk, l := range m {
			if len(l) == 0 {
				delete(m, kk)
			}
		}
		if op%checkEvery == 0 || op == ops-1 {
			checkListState(t, rt, m, keys, "op", strconv.Itoa(op), squeeze(fmt.Sprintf("%q", args)))
		}
	}
}

// TestListQuicklistGrowsAndShrinks drives one list far past the node limit
// from both ends and back to empty, checking the structure on the way.
func TestListQuicklistGrowsAndShrinks(t *testing.T) {
	rt, table := newTestRuntime(t, 1, RunToCompletion)
	l := keyspace.DefaultEncodingLimits
	l.ListMaxListpackSize = -1
	rt.SetEncodingLimits(l)
	p := newProducer(rt, table)
	m := listModel{}
	for i := range 3000 {
		v := strconv.Itoa(i) + strings.Repeat("x", i%200)
		if i%3 == 0 {
			p.do("LPUSH", "q", v)
			m["q"] = append([]string{v}, m["q"]...)
		} else {
			p.do("RPUSH", "q", v)
			m["q"] = append(m["q"], v)
		}
	}
	checkListState(t, rt, m, []string{"q"})
	if got := p.do("OBJECT", "ENCODING", "q").String(); got != eBulk("quicklist") {
		t.Fatalf("OBJECT ENCODING = %s", got)
	}
	for i := 0; len(m["q"]) > 0; i++ {
		front := i%2 == 0
		cmd := "RPOP"
		if front {
			cmd = "LPOP"
		}
		got := p.do(cmd, "q", "7").String()
		want := eBulks(func() []string {
			var out []string
			for range 7 {
				l := m["q"]
				if len(l) == 0 {
					break
				}
				if front {
					out, m["q"] = append(out, l[0]), l[1:]
				} else {
					out, m["q"] = append(out, l[len(l)-1]), l[:len(l)-1]
				}
			}
			return out
		}())
		if got != want {
			t.Fatalf("%s q 7: got %s want %s", cmd, got, want)
		}
		if i%40 == 0 {
			checkListState(t, rt, m, []string{"q"})
		}
	}
	checkListState(t, rt, m, []string{"q"})
}

// TestListNullShapes checks the replies whose RESP2 and RESP3 nulls differ,
// which the golden scripts' formatter shows alike.
func TestListNullShapes(t *testing.T) {
	rt, table := newTestRuntime(t, 1, RunToCompletion)
	for _, tc := range []struct {
		args         []string
		resp2, resp3 string
	}{
		{[]string{"LPOP", "nokey"}, "$-1\r\n", "_\r\n"},
		{[]string{"RPOP", "nokey", "2"}, "*-1\r\n", "_\r\n"},
		{[]string{"LPOP", "nokey", "0"}, "*-1\r\n", "_\r\n"},
		{[]string{"LINDEX", "nokey", "0"}, "$-1\r\n", "_\r\n"},
		{[]string{"LPOS", "nokey", "a"}, "$-1\r\n", "_\r\n"},
		{[]string{"LPOS", "nokey", "a", "COUNT", "1"}, "*0\r\n", "*0\r\n"},
		{[]string{"LRANGE", "nokey", "0", "-1"}, "*0\r\n", "*0\r\n"},
		{[]string{"LMOVE", "nokey", "x", "LEFT", "LEFT"}, "$-1\r\n", "_\r\n"},
		{[]string{"LMPOP", "1", "nokey", "LEFT"}, "*-1\r\n", "_\r\n"},
		{[]string{"BLPOP", "nokey", "0.01"}, "*-1\r\n", "_\r\n"},
		{[]string{"BLMOVE", "nokey", "x", "LEFT", "LEFT", "0.01"}, "$-1\r\n", "_\r\n"},
		{[]string{"BLMPOP", "0.01", "1", "nokey", "LEFT"}, "*-1\r\n", "_\r\n"},
	} {
		for _, resp3 := range []bool{false, true} {
			var c keyspace.Ctx
			c.Bind(rt.env)
			c.RESP3 = resp3
			argv := make([][]byte, len(tc.args))
			for i, a := range tc.args {
				argv[i] = []byte(a)
			}
			c.Cmd = table.Lookup(argv[0])
			c.Args = argv
			idx, _ := rt.Route(c.Cmd, argv)
			if !rt.TryExec(idx, &c) {
				t.Fatal("TryExec refused")
			}
			want := tc.resp2
			if resp3 {
				want = tc.resp3
			}
			if string(c.Out) != want {
				t.Errorf("%q (RESP3 %v): got %q; want %q", tc.args, resp3, c.Out, want)
			}
		}
	}
}

// ---- blocking ------------------------------------------------------------------------

func TestListBlocking(t *testing.T) {
	rt, table := newTestRuntime(t, 4, RunToCompletion)
	p := newProducer(rt, table)
	expect := func(got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("got %s; want %s", got, want)
		}
	}

	// Served at once when a key has elements.
	p.do("RPUSH", "ready", "a", "b")
	expect(parkClient(t, rt, p, "BRPOP", "nokey", "ready", "0").reply(t), `["ready" "b"]`)

	// Waiters on one key are served in the order they blocked, one element
	// each; what is left stays.
	a := parkClient(t, rt, p, "BLPOP", "q", "0")
	b := parkClient(t, rt, p, "BLPOP", "other", "q", "0")
	a.none(t)
	expect(p.do("RPUSH", "q", "1", "2", "3").String(), eInt(3))
	expect(a.reply(t), `["q" "1"]`)
	expect(b.reply(t), `["q" "2"]`)
	expect(p.do("LRANGE", "q", "0", "-1").String(), `["3"]`)

	// BRPOP on keys of different shards takes from the one that got data.
	a = parkClient(t, rt, p, "BRPOP", "k1", "k2", "k3", "0")
	p.do("RPUSH", "k3", "x", "y")
	expect(a.reply(t), `["k3" "y"]`)

	// BLMPOP takes up to COUNT from the key that got data.
	a = parkClient(t, rt, p, "BLMPOP", "0", "2", "m1", "m2", "RIGHT", "COUNT", "2")
	p.do("RPUSH", "m2", "a", "b", "c")
	expect(a.reply(t), `["m2" ["c" "b"]]`)
	expect(p.do("LRANGE", "m2", "0", "-1").String(), `["a"]`)

	// A key of another type on the way does not stop a woken BLMPOP.
	a = parkClient(t, rt, p, "BLMPOP", "0", "2", "{w}s", "{w}l", "LEFT")
	p.do("SET", "{w}s", "str")
	p.do("RPUSH", "{w}l", "v")
	expect(a.reply(t), `["{w}l" ["v"]]`)

	// BLMOVE moves the element once it arrives, to a new destination.
	a = parkClient(t, rt, p, "BLMOVE", "{m}src", "{m}dst", "LEFT", "RIGHT", "0")
	p.do("LPUSH", "{m}src", "e1")
	expect(a.reply(t), `"e1"`)
	expect(p.do("LRANGE", "{m}dst", "0", "-1").String(), `["e1"]`)
	expect(p.do("EXISTS", "{m}src").String(), eInt(0))

	// BRPOPLPUSH onto itself: a rotation of the one element.
	a = parkClient(t, rt, p, "BRPOPLPUSH", "{r}l", "{r}l", "0")
	p.do("RPUSH", "{r}l", "only")
	expect(a.reply(t), `"only"`)
	expect(p.do("LRANGE", "{r}l", "0", "-1").String(), `["only"]`)

	// A destination of the wrong type: the woken client gets WRONGTYPE and
	// the element stays in the source, as in Redis 7.0.
	a = parkClient(t, rt, p, "BLMOVE", "{t}src", "{t}dst", "LEFT", "LEFT", "0")
	p.do("SET", "{t}dst", "str")
	p.do("RPUSH", "{t}src", "x")
	expect(a.reply(t), eErr("WRONGTYPE Operation against a key holding the wrong kind of value"))
	expect(p.do("LRANGE", "{t}src", "0", "-1").String(), `["x"]`)

	// A timeout replies the null of the command's shape.
	start := time.Now()
	expect(parkClient(t, rt, p, "BLPOP", "none", "0.05").reply(t), eNilArray)
	expect(parkClient(t, rt, p, "BLMOVE", "none", "x", "LEFT", "LEFT", "0.05").reply(t), eNilBulk)
	expect(parkClient(t, rt, p, "BLMPOP", "0.05", "1", "none", "LEFT").reply(t), eNilArray)
	if el := time.Since(start); el < 140*time.Millisecond {
		t.Fatalf("three 50ms timeouts took %v", el)
	}
}
