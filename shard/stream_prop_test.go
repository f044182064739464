package shard

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
	"github.com/svcdb/svcdb/shard/values"
)

// ---- a reference model of Redis 7.0 streams ----------------------------------

type mEntry struct {
	id  values.StreamID
	fv  []string
	del bool
}

// mNode is one Redis listpack node: entries in order, tombstones included.
type mNode struct {
	ents []*mEntry
	live int
}

type mNack struct {
	consumer string
	count    int64
}

type mGroup struct {
	last        values.StreamID
	entriesRead int64
	pel         map[values.StreamID]*mNack
	consumers   map[string]bool
}

type mStream struct {
	nodes  []*mNode
	length int64
	last   values.StreamID
	first  values.StreamID
	maxDel values.StreamID
	added  int64
	groups map[string]*mGroup
}

func (m *mStream) entries() []*mEntry {
	var out []*mEntry
	for _, n := range m.nodes {
		for _, e := range n.ents {
			if !e.del {
				out = append(out, e)
			}
		}
	}
	return out
}

func (m *mStream) live(id values.StreamID) *mEntry {
	for _, e := range m.entries() {
		if e.id == id {
			return e
		}
	}
	return nil
}

func (m *mStream) refreshFirst() {
	if es := m.entries(); len(es) > 0 {
		m.first = es[0].id
	} else {
		m.first = values.StreamID{}
	}
}

func (m *mStream) add(id values.StreamID, fv []string, maxEntries int) {
	var tail *mNode
	if len(m.nodes) > 0 {
		tail = m.nodes[len(m.nodes)-1]
		if len(tail.ents) >= maxEntries {
			tail = nil
		}
	}
	if tail == nil {
		tail = &mNode{}
		m.nodes = append(m.nodes, tail)
	}
	tail.ents = append(tail.ents, &mEntry{id: id, fv: fv})
	tail.live++
	m.length++
	m.added++
	m.last = id
	if m.length == 1 {
		m.first = id
	}
}

func (m *mStream) trim(strategy int, maxLen int64, minID values.StreamID, approx bool, limit int64) int64 {
	if strategy == values.TrimNone {
		return 0
	}
	var deleted int64
	for len(m.nodes) > 0 {
		if strategy == values.TrimMaxLen && m.length <= maxLen {
			break
		}
		n := m.nodes[0]
		if limit != 0 && deleted+int64(n.live) > limit {
			break
		}
		var remove bool
		if strategy == values.TrimMaxLen {
			remove = m.length-int64(n.live) >= maxLen
		} else {
			remove = n.ents[len(n.ents)-1].id.Less(minID)
		}
		if remove {
			m.nodes = m.nodes[1:]
			m.length -= int64(n.live)
			deleted += int64(n.live)
			continue
		}
		if approx {
			break
		}
		for _, e := range n.ents {
			if strategy == values.TrimMaxLen && m.length <= maxLen || strategy == values.TrimMinID && !e.id.Less(minID) {
				break
			}
			if !e.del {
				e.del = true
				n.live--
				m.length--
				deleted++
			}
		}
		break
	}
	if m.length == 0 {
		m.first = values.StreamID{}
	} else if deleted > 0 {
		m.refreshFirst()
	}
	return deleted
}

func (m *mStream) xdel(id values.StreamID) bool {
	for i, n := range m.nodes {
		for _, e := range n.ents {
			if e.id == id && !e.del {
				if n.live == 1 {
					m.nodes = slices.Delete(m.nodes, i, i+1)
				} else {
					e.del = true
					n.live--
				}
				m.length--
				return true
			}
		}
	}
	return false
}

func (m *mStream) hasTombstonesFrom(start values.StreamID) bool {
	if m.length == 0 || m.maxDel.IsZero() || m.first.Cmp(m.maxDel) > 0 {
		return false
	}
	return start.Cmp(m.maxDel) <= 0
}

func (m *mStream) estimate(id values.StreamID) int64 {
	switch {
	case m.added == 0:
		return 0
	case m.length == 0 && id.Cmp(m.last) <= 0:
		return m.added
	case id == m.last:
		return m.added
	case m.last.Less(id):
		return -1
	}
	if m.maxDel.IsZero() || m.maxDel.Less(m.first) {
		if id.Less(m.first) {
			return m.added - m.length
		}
		if id == m.first {
			return m.added - m.length + 1
		}
	}
	return -1
}

func (m *mStream) lag(g *mGroup) string {
	if m.added == 0 {
		return ":0"
	}
	if g.entriesRead != -1 && !m.hasTombstonesFrom(g.last) {
		return ":" + strconv.FormatInt(m.added-g.entriesRead, 10)
	}
	if r := m.estimate(g.last); r != -1 {
		return ":" + strconv.FormatInt(m.added-r, 10)
	}
	return "(nil)"
}

// ---- reply formatting ----------------------------------------------------------

func fmtV(v resp.Value) string {
	var sb strings.Builder
	var w func(v resp.Value)
	w = func(v resp.Value) {
		switch {
		case v.Null || v.Type == '_':
			sb.WriteString("(nil)")
		case v.Type == '*' || v.Type == '%':
			sb.WriteString("[")
			for i, e := range v.Elems {
				if i > 0 {
					sb.WriteString(", ")
				}
				w(e)
			}
			sb.WriteString("]")
		case v.Type == ':':
			sb.WriteString(":" + strconv.FormatInt(v.Int, 10))
		case v.Type == '$':
			sb.WriteString(strconv.Quote(string(v.Str)))
		default:
			sb.WriteString(string(v.Type) + string(v.Str))
		}
	}
	w(v)
	return sb.String()
}

func qid(id values.StreamID) string { return strconv.Quote(string(values.AppendStreamID(nil, id))) }

func fmtEntry(e *mEntry) string {
	parts := make([]string, len(e.fv))
	for i, s := range e.fv {
		parts[i] = strconv.Quote(s)
	}
	return "[" + qid(e.id) + ", [" + strings.Join(parts, ", ") + "]]"
}

func fmtList(items []string) string { return "[" + strings.Join(items, ", ") + "]" }

func idArg(id values.StreamID) string { return string(values.AppendStreamID(nil, id)) }

// ---- structure checks ------------------------------------------------------------

// lpBytesRecount is the size of a block's Redis listpack, from scratch.
func lpBytesRecount(b *values.StreamBlock) int64 {
	n := int64(7 + values.ListpackIntSize(b.Live) + values.ListpackIntSize(b.Dead) + values.ListpackIntSize(int64(b.NMaster)) + values.ListpackIntSize(0))
	m := b.Data
	for range b.NMaster {
		var f []byte
		f, m = values.NextStr(m)
		n += int64(values.ListpackStrSize(f))
	}
	for _, e := range b.Ents {
		n += int64(values.ListpackIntSize(int64(e.Flags&^values.EntryDeleted)) + values.ListpackIntSize(int64(e.Id.Ms-b.Master.Ms)) + values.ListpackIntSize(int64(e.Id.Seq-b.Master.Seq)))
		rec := b.Data[e.Off:]
		strs := int(e.Nf)
		cnt := int64(e.Nf) + 3
		if e.Flags&values.EntrySameFields == 0 {
			strs *= 2
			n += int64(values.ListpackIntSize(int64(e.Nf)))
			cnt += int64(e.Nf) + 1
		}
		for range strs {
			var x []byte
			x, rec = values.NextStr(rec)
			n += int64(values.ListpackStrSize(x))
		}
		n += int64(values.ListpackIntSize(cnt))
	}
	return n
}

// checkStream verifies s's invariants and that its incrementally kept memory
// equals a recount from scratch.
func checkStream(s *values.Stream) error {
	mem := int64(values.StreamOverhead) + int64(cap(s.Blocks))*8 + int64(cap(s.Groups))*8
	var length int64
	var prev *values.StreamID
	for i, b := range s.Blocks {
		if len(b.Ents) == 0 || b.Ents[0].Id != b.Master {
			return fmt.Errorf("block %d: master %v, first entry mismatch", i, b.Master)
		}
		var live, dead int64
		for _, e := range b.Ents {
			if prev != nil && !prev.Less(e.Id) {
				return fmt.Errorf("block %d: entries out of order at %v", i, e.Id)
			}
			id := e.Id
			prev = &id
			if e.Flags&values.EntryDeleted != 0 {
				dead++
			} else {
				live++
			}
		}
		if live != b.Live || dead != b.Dead {
			return fmt.Errorf("block %d: live/dead %d/%d, counted %d/%d", i, b.Live, b.Dead, live, dead)
		}
		if got := lpBytesRecount(b); got != b.LpBytes() {
			return fmt.Errorf("block %d: lpBytes %d, recount %d", i, b.LpBytes(), got)
		}
		length += live
		mem += values.StreamBlockOverhead + int64(cap(b.Ents))*values.StreamEntrySize + int64(cap(b.Data))
	}
	if length != s.Length {
		return fmt.Errorf("length %d, counted %d", s.Length, length)
	}
	for i, g := range s.Groups {
		if i > 0 && s.Groups[i-1].Name >= g.Name {
			return fmt.Errorf("groups out of order")
		}
		pm, pn := g.Pel.Recount()
		if pm != g.Pel.Mem || pn != g.Pel.N {
			return fmt.Errorf("group %s PEL: mem %d n %d, recount %d %d", g.Name, g.Pel.Mem, g.Pel.N, pm, pn)
		}
		mem += values.StreamGroupOverhead + int64(len(g.Name)) + int64(cap(g.Consumers))*8 + pm + int64(pn)*values.StreamNACKSize
		total := 0
		for j, c := range g.Consumers {
			if j > 0 && g.Consumers[j-1].Name >= c.Name {
				return fmt.Errorf("consumers out of order")
			}
			cm, cn := c.Pel.Recount()
			if cm != c.Pel.Mem || cn != c.Pel.N {
				return fmt.Errorf("consumer %s PEL: mem %d n %d, recount %d %d", c.Name, c.Pel.Mem, c.Pel.N, cm, cn)
			}
			for cur := c.Pel.First(); cur.Valid(&c.Pel); cur = c.Pel.Next(cur) {
				it := c.Pel.At(cur)
				if it.N.Consumer != c || g.Pel.Get(it.Id) != it.N {
					return fmt.Errorf("consumer %s: NACK %v not shared with the group PEL", c.Name, it.Id)
				}
			}
			total += cn
			mem += values.StreamConsumerOverhead + int64(len(c.Name)) + cm
		}
		if total != pn {
			return fmt.Errorf("group %s: %d pending, consumers hold %d", g.Name, pn, total)
		}
	}
	if mem != s.Mem {
		return fmt.Errorf("memory %d, recount %d", s.Mem, mem)
	}
	return nil
}

// inspectKey runs fn on key's object holding its shard (nil when missing).
func inspectKey(rt *Runtime, key string, fn func(d *keyspace.DB, o *keyspace.Object)) {
	sh := rt.shards[rt.ShardOf([]byte(key))]
	rt.acquire(sh)
	defer rt.release(sh)
	d := sh.store.DBs()[0]
	o, _ := d.Find([]byte(key))
	fn(d, o)
}

// ---- the property test -----------------------------------------------------------

func TestStreamAgainstModel(t *testing.T) {
	seeds := 12
	steps := 1500
	if testing.Short() {
		seeds, steps = 4, 600
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runStreamModel(t, uint64(seed), steps)
		})
	}
}

func runStreamModel(t *testing.T, seed uint64, steps int) {
	rt, table := newTestRuntime(t, 2, RunToCompletion)
	r := rand.New(rand.NewPCG(seed, 99))
	maxEntries := 2 + r.IntN(5)
	lim := keyspace.DefaultEncodingLimits
	lim.StreamNodeMaxEntries = int64(maxEntries)
	rt.SetEncodingLimits(lim)
	p := newProducer(rt, table)
	const key = "s"
	var m *mStream // nil: the key does not exist

	randID := func() values.StreamID {
		if m != nil && r.IntN(3) > 0 && m.length > 0 {
			es := m.entries()
			id := es[r.IntN(len(es))].id
			if r.IntN(3) == 0 {
				id.Seq++
			}
			return id
		}
		return values.StreamID{Ms: uint64(r.IntN(40)), Seq: uint64(r.IntN(3))}
	}
	fields := []string{"a", "b", "c", "12", "-7"}
	randFV := func() []string {
		if r.IntN(2) == 0 {
			return []string{"a", strconv.Itoa(r.IntN(1000))}
		}
		n := 1 + r.IntN(3)
		fv := make([]string, 0, 2*n)
		for range n {
			fv = append(fv, fields[r.IntN(len(fields))], strings.Repeat("v", r.IntN(12)))
		}
		return fv
	}
	groupNames := []string{"g1", "g2", "g3"}
	consumerNames := []string{"alice", "bob", "carol"}
	var history []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("commands (the last %d):\n%s", len(history), strings.Join(history, "\n"))
		}
	})
	do := func(args ...string) resp.Value {
		history = append(history, strings.Join(args, " "))
		if len(history) > 40 {
			history = history[1:]
		}
		return p.do(args...)
	}
	check := func(step int, args []string, want string) {
		t.Helper()
		got := fmtV(do(args...))
		if got != want {
			t.Fatalf("step %d: %q\n got: %s\nwant: %s", step, args, got, want)
		}
	}

	for step := range steps {
		switch op := r.IntN(100); {
		case op < 30: // XADD
			args := []string{"XADD", key}
			if r.IntN(8) == 0 {
				args = append(args, "NOMKSTREAM")
			}
			strategy, approx := values.TrimNone, false
			var maxLen int64
			var minID values.StreamID
			var limit int64
			if r.IntN(4) == 0 {
				if r.IntN(2) == 0 {
					strategy = values.TrimMaxLen
					maxLen = int64(r.IntN(12))
					args = append(args, "MAXLEN")
				} else {
					strategy = values.TrimMinID
					minID = randID()
					args = append(args, "MINID")
				}
				switch r.IntN(3) {
				case 1:
					args = append(args, "=")
				case 2:
					args = append(args, "~")
					approx = true
				}
				if strategy == values.TrimMaxLen {
					args = append(args, strconv.FormatInt(maxLen, 10))
				} else {
					args = append(args, idArg(minID))
				}
				if approx {
					limit = 100 * int64(maxEntries)
					if r.IntN(3) == 0 {
						limit = int64(r.IntN(6))
						args = append(args, "LIMIT", strconv.FormatInt(limit, 10))
					}
				}
			}
			var id values.StreamID
			auto := r.IntN(4) == 0
			if m != nil && r.IntN(2) == 0 {
				id = m.last
				id.Ms += uint64(r.IntN(3))
				id.Seq += uint64(r.IntN(2))
			} else {
				id = values.StreamID{Ms: uint64(r.IntN(50)), Seq: uint64(r.IntN(4))}
			}
			if auto {
				args = append(args, strconv.FormatUint(id.Ms, 10)+"-*")
			} else {
				args = append(args, idArg(id))
			}
			fv := randFV()
			args = append(args, fv...)
			if m == nil && slices.Contains(args, "NOMKSTREAM") {
				check(step, args, "(nil)")
				continue
			}
			if !auto && id.IsZero() {
				check(step, args, "-ERR The ID specified in XADD must be greater than 0-0")
				continue
			}
			if m == nil {
				m = &mStream{groups: map[string]*mGroup{}}
			}
			if auto {
				if m.last.Ms == id.Ms {
					id = m.last
					id.Seq++
				} else {
					id.Seq = 0
				}
			}
			if !m.last.Less(id) {
				check(step, args, "-ERR The ID specified in XADD is equal or smaller than the target stream top item")
				continue
			}
			m.add(id, fv, maxEntries)
			check(step, args, qid(id))
			m.trim(strategy, maxLen, minID, approx, limit)
		case op < 38: // XDEL
			ids := []values.StreamID{randID()}
			if r.IntN(2) == 0 {
				ids = append(ids, randID())
			}
			args := []string{"XDEL", key}
			for _, id := range ids {
				args = append(args, idArg(id))
			}
			if m == nil {
				check(step, args, ":0")
				continue
			}
			n, firstGone := 0, false
			for _, id := range ids {
				if m.xdel(id) {
					n++
					if id == m.first {
						firstGone = true
					}
					if m.maxDel.Less(id) {
						m.maxDel = id
					}
				}
			}
			if n > 0 && (m.length == 0 || firstGone) {
				m.refreshFirst()
			}
			check(step, args, ":"+strconv.Itoa(n))
		case op < 44: // XTRIM
			args := []string{"XTRIM", key}
			strategy, approx := values.TrimMaxLen, r.IntN(2) == 0
			var maxLen int64
			var minID values.StreamID
			if r.IntN(2) == 0 {
				maxLen = int64(r.IntN(15))
				args = append(args, "MAXLEN")
			} else {
				strategy = values.TrimMinID
				minID = randID()
				args = append(args, "MINID")
			}
			if approx {
				args = append(args, "~")
			}
			if strategy == values.TrimMaxLen {
				args = append(args, strconv.FormatInt(maxLen, 10))
			} else {
				args = append(args, idArg(minID))
			}
			var limit int64
			if approx {
				limit = 100 * int64(maxEntries)
				if r.IntN(2) == 0 {
					limit = int64(r.IntN(8))
					args = append(args, "LIMIT", strconv.FormatInt(limit, 10))
				}
			}
			if m == nil {
				check(step, args, ":0")
				continue
			}
			n := m.trim(strategy, maxLen, minID, approx, limit)
			check(step, args, ":"+strconv.FormatInt(n, 10))
		case op < 56: // XRANGE / XREVRANGE / XLEN
			start, end := randID(), randID()
			if start.Cmp(end) > 0 && r.IntN(3) > 0 {
				start, end = end, start
			}
			startArg, endArg := idArg(start), idArg(end)
			if r.IntN(5) == 0 {
				startArg, start = "-", values.StreamID{}
			}
			if r.IntN(5) == 0 {
				endArg, end = "+", values.MaxStreamID
			}
			if r.IntN(4) == 0 && start != values.MaxStreamID {
				startArg = "(" + idArg(start)
				start.Incr()
			}
			if r.IntN(4) == 0 && !end.IsZero() && end != values.MaxStreamID {
				endArg = "(" + idArg(end)
				end.Decr()
			}
			count := -1
			rev := r.IntN(2) == 0
			args := []string{"XRANGE", key, startArg, endArg}
			if rev {
				args = []string{"XREVRANGE", key, endArg, startArg}
			}
			if r.IntN(3) == 0 {
				count = r.IntN(5)
				args = append(args, "COUNT", strconv.Itoa(count))
			}
			if r.IntN(6) == 0 {
				want := ":0"
				if m != nil {
					want = ":" + strconv.FormatInt(m.length, 10)
				}
				check(step, []string{"XLEN", key}, want)
				continue
			}
			var want string
			switch {
			case m == nil:
				want = "[]"
			case count == 0:
				want = "(nil)"
			default:
				var items []string
				es := m.entries()
				if rev {
					slices.Reverse(es)
				}
				for _, e := range es {
					if e.id.Less(start) || end.Less(e.id) {
						continue
					}
					items = append(items, fmtEntry(e))
					if len(items) == count {
						break
					}
				}
				want = fmtList(items)
			}
			check(step, args, want)
		case op < 60: // XGROUP CREATE / SETID / DESTROY / DELCONSUMER
			g := groupNames[r.IntN(len(groupNames))]
			switch r.IntN(5) {
			case 0, 1:
				id := randID()
				idA := idArg(id)
				if r.IntN(3) == 0 {
					idA = "$"
					if m != nil {
						id = m.last
					} else {
						id = values.StreamID{}
					}
				}
				args := []string{"XGROUP", "CREATE", key, g, idA}
				mk := r.IntN(2) == 0
				if mk {
					args = append(args, "MKSTREAM")
				}
				switch {
				case m == nil && !mk:
					check(step, args, "-ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
				case m != nil && m.groups[g] != nil:
					check(step, args, "-BUSYGROUP Consumer Group name already exists")
				default:
					if m == nil {
						m = &mStream{groups: map[string]*mGroup{}}
					}
					m.groups[g] = &mGroup{last: id, entriesRead: -1, pel: map[values.StreamID]*mNack{}, consumers: map[string]bool{}}
					check(step, args, "+OK")
				}
			case 2:
				if m == nil || m.groups[g] == nil {
					continue
				}
				id := randID()
				er := int64(r.IntN(5)) - 1
				check(step, []string{"XGROUP", "SETID", key, g, idArg(id), "ENTRIESREAD", strconv.FormatInt(er, 10)}, "+OK")
				m.groups[g].last, m.groups[g].entriesRead = id, er
			case 3:
				if m == nil {
					continue
				}
				want := ":0"
				if m.groups[g] != nil {
					want = ":1"
					delete(m.groups, g)
				}
				check(step, []string{"XGROUP", "DESTROY", key, g}, want)
			case 4:
				if m == nil || m.groups[g] == nil {
					continue
				}
				gr := m.groups[g]
				c := consumerNames[r.IntN(len(consumerNames))]
				n := 0
				if gr.consumers[c] {
					for id, nk := range gr.pel {
						if nk.consumer == c {
							delete(gr.pel, id)
							n++
						}
					}
					delete(gr.consumers, c)
				}
				check(step, []string{"XGROUP", "DELCONSUMER", key, g, c}, ":"+strconv.Itoa(n))
			}
		case op < 74: // XREADGROUP
			if m == nil || len(m.groups) == 0 {
				continue
			}
			g := groupNames[r.IntN(len(groupNames))]
			gr := m.groups[g]
			if gr == nil {
				continue
			}
			c := consumerNames[r.IntN(len(consumerNames))]
			args := []string{"XREADGROUP", "GROUP", g, c}
			count := 0
			if r.IntN(2) == 0 {
				count = 1 + r.IntN(4)
				args = append(args, "COUNT", strconv.Itoa(count))
			}
			noack := r.IntN(5) == 0
			if noack {
				args = append(args, "NOACK")
			}
			history := r.IntN(3) == 0
			if history {
				start := randID()
				if r.IntN(2) == 0 {
					start = values.StreamID{}
				}
				args = append(args, "STREAMS", key, idArg(start))
				gr.consumers[c] = true
				var ids []values.StreamID
				for id, nk := range gr.pel {
					if nk.consumer == c && start.Less(id) {
						ids = append(ids, id)
					}
				}
				slices.SortFunc(ids, values.StreamID.Cmp)
				if count > 0 && len(ids) > count {
					ids = ids[:count]
				}
				items := []string{}
				for _, id := range ids {
					if e := m.live(id); e != nil {
						items = append(items, fmtEntry(e))
						gr.pel[id].count++
					} else {
						items = append(items, "["+qid(id)+", (nil)]")
					}
				}
				check(step, args, "[[\"s\", "+fmtList(items)+"]]")
				continue
			}
			args = append(args, "STREAMS", key, ">")
			var items []string
			var lastLive values.StreamID
			if es := m.entries(); len(es) > 0 {
				lastLive = es[len(es)-1].id
			}
			if m.length == 0 || !gr.last.Less(lastLive) {
				check(step, args, "(nil)")
				continue
			}
			gr.consumers[c] = true
			for _, e := range m.entries() {
				if !gr.last.Less(e.id) {
					continue
				}
				if gr.entriesRead != -1 && !m.hasTombstonesFrom(e.id) {
					gr.entriesRead++
				} else if m.added != 0 {
					gr.entriesRead = m.estimate(e.id)
				}
				gr.last = e.id
				items = append(items, fmtEntry(e))
				if !noack {
					if nk := gr.pel[e.id]; nk != nil {
						nk.consumer, nk.count = c, 1
					} else {
						gr.pel[e.id] = &mNack{consumer: c, count: 1}
					}
				}
				if len(items) == count {
					break
				}
			}
			check(step, args, "[[\"s\", "+fmtList(items)+"]]")
		case op < 80: // XACK
			if m == nil {
				continue
			}
			g := groupNames[r.IntN(len(groupNames))]
			ids := []values.StreamID{randID(), randID()}
			gr := m.groups[g]
			for id := range gr.pelIDs() {
				if r.IntN(3) == 0 {
					ids = append(ids, id)
				}
			}
			args := []string{"XACK", key, g}
			for _, id := range ids {
				args = append(args, idArg(id))
			}
			n := 0
			if gr != nil {
				for _, id := range ids {
					if gr.pel[id] != nil {
						delete(gr.pel, id)
						n++
					}
				}
			}
			check(step, args, ":"+strconv.Itoa(n))
		case op < 86: // XPENDING
			if m == nil {
				continue
			}
			g := groupNames[r.IntN(len(groupNames))]
			gr := m.groups[g]
			if gr == nil {
				check(step, []string{"XPENDING", key, g}, "-NOGROUP No such key 's' or consumer group '"+g+"'")
				continue
			}
			ids := slices.SortedFunc(gr.pelIDs(), values.StreamID.Cmp)
			if r.IntN(2) == 0 {
				var want string
				if len(ids) == 0 {
					want = "[:0, (nil), (nil), (nil)]"
				} else {
					per := map[string]int{}
					for _, nk := range gr.pel {
						per[nk.consumer]++
					}
					names := make([]string, 0, len(per))
					for n := range per {
						names = append(names, n)
					}
					sort.Strings(names)
					var cs []string
					for _, n := range names {
						cs = append(cs, "["+strconv.Quote(n)+", "+strconv.Quote(strconv.Itoa(per[n]))+"]")
					}
					want = fmt.Sprintf("[:%d, %s, %s, %s]", len(ids), qid(ids[0]), qid(ids[len(ids)-1]), fmtList(cs))
				}
				check(step, []string{"XPENDING", key, g}, want)
				continue
			}
			args := []string{"XPENDING", key, g, "-", "+", "100"}
			filter := ""
			if r.IntN(2) == 0 {
				filter = consumerNames[r.IntN(len(consumerNames))]
				args = append(args, filter)
			}
			v := do(args...)
			// Drop the idle times, which depend on the clock.
			for i := range v.Elems {
				if len(v.Elems[i].Elems) == 4 {
					v.Elems[i].Elems = slices.Delete(v.Elems[i].Elems, 2, 3)
				}
			}
			items := []string{}
			if filter == "" || gr.consumers[filter] {
				for _, id := range ids {
					nk := gr.pel[id]
					if filter != "" && nk.consumer != filter {
						continue
					}
					items = append(items, fmt.Sprintf("[%s, %s, :%d]", qid(id), strconv.Quote(nk.consumer), nk.count))
				}
			}
			if got, want := fmtV(v), fmtList(items); got != want {
				t.Fatalf("step %d: %q\n got: %s\nwant: %s", step, args, got, want)
			}
		case op < 92: // XCLAIM / XAUTOCLAIM with JUSTID
			if m == nil {
				continue
			}
			g := groupNames[r.IntN(len(groupNames))]
			gr := m.groups[g]
			if gr == nil {
				continue
			}
			c := consumerNames[r.IntN(len(consumerNames))]
			if r.IntN(2) == 0 {
				ids := []values.StreamID{randID()}
				for id := range gr.pelIDs() {
					if r.IntN(2) == 0 {
						ids = append(ids, id)
					}
				}
				args := []string{"XCLAIM", key, g, c, "0"}
				for _, id := range ids {
					args = append(args, idArg(id))
				}
				args = append(args, "JUSTID")
				items := []string{}
				for _, id := range ids {
					nk := gr.pel[id]
					if m.live(id) == nil {
						delete(gr.pel, id)
						continue
					}
					if nk == nil {
						continue
					}
					gr.consumers[c] = true
					nk.consumer = c
					items = append(items, qid(id))
				}
				check(step, args, fmtList(items))
				continue
			}
			start := randID()
			count := 1 + r.IntN(4)
			args := []string{"XAUTOCLAIM", key, g, c, "0", idArg(start), "COUNT", strconv.Itoa(count), "JUSTID"}
			ids := slices.SortedFunc(gr.pelIDs(), values.StreamID.Cmp)
			claimed, deleted := []string{}, []string{}
			next := values.StreamID{}
			attempts := count * 10
			i := 0
			for i < len(ids) && ids[i].Less(start) {
				i++
			}
			for ; attempts > 0 && count > 0 && i < len(ids); attempts-- {
				id := ids[i]
				i++
				count--
				if m.live(id) == nil {
					delete(gr.pel, id)
					deleted = append(deleted, qid(id))
					continue
				}
				gr.consumers[c] = true
				gr.pel[id].consumer = c
				claimed = append(claimed, qid(id))
			}
			if i < len(ids) {
				next = ids[i]
			}
			check(step, args, fmt.Sprintf("[%s, %s, %s]", qid(next), fmtList(claimed), fmtList(deleted)))
		case op < 96: // XINFO STREAM / GROUPS
			if m == nil {
				check(step, []string{"XINFO", "STREAM", key}, "-ERR no such key")
				continue
			}
			if r.IntN(2) == 0 {
				es := m.entries()
				first, last := "(nil)", "(nil)"
				if len(es) > 0 {
					first, last = fmtEntry(es[0]), fmtEntry(es[len(es)-1])
				}
				v := do("XINFO", "STREAM", key)
				v.Elems[5] = resp.Value{Type: ':'} // radix-tree-nodes: checked against Redis by the golden script
				want := fmt.Sprintf(`["length", :%d, "radix-tree-keys", :%d, "radix-tree-nodes", :0, "last-generated-id", %s, "max-deleted-entry-id", %s, "entries-added", :%d, "recorded-first-entry-id", %s, "groups", :%d, "first-entry", %s, "last-entry", %s]`,
					m.length, len(m.nodes), qid(m.last), qid(m.maxDel), m.added, qid(m.first), len(m.groups), first, last)
				if got := fmtV(v); got != want {
					t.Fatalf("step %d: XINFO STREAM\n got: %s\nwant: %s", step, got, want)
				}
				continue
			}
			names := make([]string, 0, len(m.groups))
			for n := range m.groups {
				names = append(names, n)
			}
			sort.Strings(names)
			items := []string{}
			for _, n := range names {
				gr := m.groups[n]
				er := "(nil)"
				if gr.entriesRead != -1 {
					er = ":" + strconv.FormatInt(gr.entriesRead, 10)
				}
				items = append(items, fmt.Sprintf(`["name", %s, "consumers", :%d, "pending", :%d, "last-delivered-id", %s, "entries-read", %s, "lag", %s]`,
					strconv.Quote(n), len(gr.consumers), len(gr.pel), qid(gr.last), er, m.lag(gr)))
			}
			check(step, []string{"XINFO", "GROUPS", key}, fmtList(items))
		default: // DEL, rarely
			if r.IntN(4) > 0 {
				continue
			}
			want := ":0"
			if m != nil {
				want = ":1"
			}
			check(step, []string{"DEL", key}, want)
			m = nil
		}
		var err error
		inspectKey(rt, key, func(d *keyspace.DB, o *keyspace.Object) {
			if (o == nil) != (m == nil) {
				err = fmt.Errorf("key exists: %v, model: %v", o != nil, m != nil)
				return
			}
			if o == nil {
				if mem := d.Memory(); mem != 0 {
					err = fmt.Errorf("empty database holds %d bytes", mem)
				}
				return
			}
			if err = checkStream(o.Coll().(*values.Stream)); err != nil {
				return
			}
			if want := int64(len(key)+keyspace.ObjectOverhead) + o.ValueMemory(); d.Memory() != want {
				err = fmt.Errorf("database memory %d, key accounts for %d", d.Memory(), want)
			}
		})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
}

func (g *mGroup) pelIDs() func(func(values.StreamID) bool) {
	return func(yield func(values.StreamID) bool) {
		if g == nil {
			return
		}
		for id := range g.pel {
			if !yield(id) {
				return
			}
		}
	}
}

// ---- COPY ----------------------------------------------------------------------

func TestStreamCopyIsDeep(t *testing.T) {
	rt, table := newTestRuntime(t, 1, RunToCompletion)
	p := newProducer(rt, table)
	for i := 1; i <= 250; i++ {
		p.do("XADD", "{s}a", strconv.Itoa(i)+"-0", "f", strconv.Itoa(i))
	}
	p.do("XGROUP", "CREATE", "{s}a", "g", "0")
	p.do("XREADGROUP", "GROUP", "g", "c", "COUNT", "100", "STREAMS", "{s}a", ">")
	if got := fmtV(p.do("COPY", "{s}a", "{s}b")); got != ":1" {
		t.Fatalf("COPY: %s", got)
	}
	p.do("XACK", "{s}a", "g", "1-0", "2-0")
	p.do("XDEL", "{s}a", "3-0")
	p.do("XADD", "{s}b", "300-0", "f", "x")
	if got := fmtV(p.do("XPENDING", "{s}b", "g")); got != `[:100, "1-0", "100-0", [["c", "100"]]]` {
		t.Fatalf("copy's PEL changed with the original's: %s", got)
	}
	if got := fmtV(p.do("XLEN", "{s}a")); got != ":249" {
		t.Fatalf("XLEN original: %s", got)
	}
	for _, k := range []string{"{s}a", "{s}b"} {
		inspectKey(rt, k, func(d *keyspace.DB, o *keyspace.Object) {
			if err := checkStream(o.Coll().(*values.Stream)); err != nil {
				t.Fatalf("%s: %v", k, err)
			}
		})
	}
	p.do("DEL", "{s}a", "{s}b")
	inspectKey(rt, "{s}a", func(d *keyspace.DB, o *keyspace.Object) {
		if d.Memory() != 0 {
			t.Fatalf("memory left after DEL: %d", d.Memory())
		}
	})
}

// ---- blocking --------------------------------------------------------------------

func TestStreamBlocking(t *testing.T) {
	rt, table := newTestRuntime(t, 4, RunToCompletion)
	p := newProducer(rt, table)
	p.do("XADD", "s", "1-0", "f", "old")

	// $ means the last ID when the command blocked, on every later run too.
	dollar := parkClient(t, rt, p, "XREAD", "BLOCK", "0", "STREAMS", "s", "$")
	// A reader waiting past the entries still to come must not stop the others.
	future := parkClient(t, rt, p, "XREAD", "BLOCK", "0", "STREAMS", "s", "5-0")
	dollar2 := parkClient(t, rt, p, "XREAD", "BLOCK", "0", "STREAMS", "nosuch", "s", "$", "$")
	dollar.none(t)
	p.do("XADD", "s", "2-0", "f", "new")
	if got := fmtV(dollar.value(t)); got != `[["s", [["2-0", ["f", "new"]]]]]` {
		t.Fatalf("XREAD $: %s", got)
	}
	if got := fmtV(dollar2.value(t)); got != `[["s", [["2-0", ["f", "new"]]]]]` {
		t.Fatalf("XREAD $ $: %s", got)
	}
	future.none(t)
	p.do("XADD", "s", "6-0", "f", "later")
	if got := fmtV(future.value(t)); got != `[["s", [["6-0", ["f", "later"]]]]]` {
		t.Fatalf("XREAD 5-0: %s", got)
	}

	// XREADGROUP >: each new entry goes to one consumer, oldest waiter first.
	p.do("XGROUP", "CREATE", "s", "g", "$")
	a := parkClient(t, rt, p, "XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
	b := parkClient(t, rt, p, "XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">")
	p.do("XADD", "s", "7-0", "f", "x")
	if got := fmtV(a.value(t)); got != `[["s", [["7-0", ["f", "x"]]]]]` {
		t.Fatalf("alice: %s", got)
	}
	b.none(t)
	p.do("XADD", "s", "8-0", "f", "y")
	if got := fmtV(b.value(t)); got != `[["s", [["8-0", ["f", "y"]]]]]` {
		t.Fatalf("bob: %s", got)
	}
	if got := fmtV(p.do("XPENDING", "s", "g")); got != `[:2, "7-0", "8-0", [["alice", "1"], ["bob", "1"]]]` {
		t.Fatalf("XPENDING: %s", got)
	}

	// Destroying the group ends the wait with -NOGROUP.
	c := parkClient(t, rt, p, "XREADGROUP", "GROUP", "g", "carol", "BLOCK", "0", "STREAMS", "s", ">")
	c.none(t)
	p.do("XGROUP", "DESTROY", "s", "g")
	if got := fmtV(c.value(t)); got != "-NOGROUP the consumer group this client was blocked on no longer exists" {
		t.Fatalf("after DESTROY: %s", got)
	}

	// A stream created by XADD wakes a reader of the missing key; a key of
	// another type does not.
	fresh := parkClient(t, rt, p, "XREAD", "BLOCK", "0", "STREAMS", "fresh", "$")
	p.do("SET", "fresh", "string")
	fresh.none(t)
	p.do("DEL", "fresh")
	p.do("XADD", "fresh", "1-1", "k", "v")
	if got := fmtV(fresh.value(t)); got != `[["fresh", [["1-1", ["k", "v"]]]]]` {
		t.Fatalf("fresh: %s", got)
	}

	// The timeout replies a null array.
	to := parkClient(t, rt, p, "XREAD", "BLOCK", "30", "STREAMS", "s", "$")
	if got := fmtV(to.value(t)); got != "(nil)" {
		t.Fatalf("timeout: %s", got)
	}
}

// ---- allocations on the hot path ---------------------------------------------

func BenchmarkXAdd(b *testing.B) {
	rt, table := newTestRuntime(b, 1, RunToCompletion)
	p := newProducer(rt, table)
	args := [][]byte{[]byte("XADD"), []byte("bench"), []byte("MAXLEN"), []byte("~"), []byte("10000"), []byte("*"), []byte("field"), []byte("value-value-value")}
	c := &p.ctx
	c.Cmd = table.Lookup(args[0])
	b.ReportAllocs()
	for b.Loop() {
		c.Now = time.Now().UnixMilli()
		c.Args, c.Out = args, c.Out[:0]
		rt.TryExec(0, c)
	}
}

func BenchmarkXRange(b *testing.B) {
	rt, table := newTestRuntime(b, 1, RunToCompletion)
	p := newProducer(rt, table)
	for i := 1; i <= 10000; i++ {
		p.do("XADD", "bench", strconv.Itoa(i)+"-0", "field", "value")
	}
	args := [][]byte{[]byte("XRANGE"), []byte("bench"), []byte("5000"), []byte("+"), []byte("COUNT"), []byte("10")}
	c := &p.ctx
	c.Cmd = table.Lookup(args[0])
	b.ReportAllocs()
	for b.Loop() {
		c.Args, c.Out = args, c.Out[:0]
		rt.TryExec(0, c)
	}
}
