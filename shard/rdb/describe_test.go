package rdb

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"github.com/svcdb/svcdb/shard/values"
)

// dataset is a neutral, comparable description of a keyspace: what a
// real redis-server reports through its commands, or what Load returned.
// Sets are sorted, zsets sorted by (score, member), scores written as
// Redis replies them ("inf", "-0", %.17g), stream groups and consumers
// sorted by name.
type dataset map[int]map[string]*keyDesc // db -> key -> value

type keyDesc struct {
	Type     string            `json:"type"`
	ExpireAt int64             `json:"expire_at_ms,omitempty"`
	Str      *string           `json:"string,omitempty"`
	List     []string          `json:"list,omitempty"`
	Set      []string          `json:"set,omitempty"`
	ZSet     [][2]string       `json:"zset,omitempty"`
	Hash     map[string]string `json:"hash,omitempty"`
	Stream   *streamDesc       `json:"stream,omitempty"`
}

type streamDesc struct {
	Entries      []entryDesc `json:"entries"`
	Length       uint64      `json:"length"`
	LastID       string      `json:"last_id"`
	FirstID      string      `json:"first_id"`
	MaxDeletedID string      `json:"max_deleted_id"`
	EntriesAdded uint64      `json:"entries_added"`
	Groups       []groupDesc `json:"groups"`
}

type entryDesc struct {
	ID     string   `json:"id"`
	Fields []string `json:"fields"`
}

type groupDesc struct {
	Name        string         `json:"name"`
	LastID      string         `json:"last_id"`
	EntriesRead int64          `json:"entries_read"`
	PEL         []pendingDesc  `json:"pel"`
	Consumers   []consumerDesc `json:"consumers"`
}

type pendingDesc struct {
	ID            string `json:"id"`
	Consumer      string `json:"consumer"`
	DeliveryTime  int64  `json:"delivery_time"`
	DeliveryCount uint64 `json:"delivery_count"`
}

type consumerDesc struct {
	Name     string   `json:"name"`
	SeenTime int64    `json:"seen_time"`
	PEL      []string `json:"pel"`
}

func idString(id StreamID) string { return fmt.Sprintf("%d-%d", id.Ms, id.Seq) }

// scoreString writes a score as Redis replies it (addReplyDouble).
func scoreString(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

func normScore(t testing.TB, s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("score %q: %v", s, err)
	}
	return scoreString(f)
}

func sortZSet(z [][2]string) {
	sort.Slice(z, func(i, j int) bool {
		a, _ := strconv.ParseFloat(z[i][1], 64)
		b, _ := strconv.ParseFloat(z[j][1], 64)
		if a != b {
			return a < b
		}
		return z[i][0] < z[j][0]
	})
}

func strs(b [][]byte) []string {
	out := make([]string, len(b))
	for i := range b {
		out[i] = string(b[i])
	}
	return out
}

// describeEntry describes one entry Load produced.
func describeEntry(e *Entry) *keyDesc {
	k := &keyDesc{Type: e.Kind.String(), ExpireAt: e.ExpireAt}
	switch e.Kind {
	case values.KindString:
		s := string(e.Str)
		k.Str = &s
	case values.KindList:
		k.List = strs(e.Elems)
	case values.KindSet:
		k.Set = strs(e.Elems)
		sort.Strings(k.Set)
	case values.KindZSet:
		for _, m := range e.ZSet {
			k.ZSet = append(k.ZSet, [2]string{string(m.Member), scoreString(m.Score)})
		}
		sortZSet(k.ZSet)
	case values.KindHash:
		k.Hash = map[string]string{}
		for i := 0; i+1 < len(e.Pairs); i += 2 {
			k.Hash[string(e.Pairs[i])] = string(e.Pairs[i+1])
		}
	case values.KindStream:
		k.Stream = describeStream(e.Stream)
	}
	return k
}

func describeStream(s *Stream) *streamDesc {
	d := &streamDesc{Entries: []entryDesc{}, Length: s.Length, LastID: idString(s.LastID),
		FirstID: idString(s.FirstID), MaxDeletedID: idString(s.MaxDeletedID),
		EntriesAdded: s.EntriesAdded, Groups: []groupDesc{}}
	for _, e := range s.Entries {
		d.Entries = append(d.Entries, entryDesc{ID: idString(e.ID), Fields: strs(e.Fields)})
	}
	for _, g := range s.Groups {
		gd := groupDesc{Name: string(g.Name), LastID: idString(g.LastID), EntriesRead: g.EntriesRead,
			PEL: []pendingDesc{}, Consumers: []consumerDesc{}}
		for _, p := range g.PEL {
			gd.PEL = append(gd.PEL, pendingDesc{ID: idString(p.ID), Consumer: string(p.Consumer),
				DeliveryTime: p.DeliveryTime, DeliveryCount: p.DeliveryCount})
		}
		for _, c := range g.Consumers {
			cd := consumerDesc{Name: string(c.Name), SeenTime: c.SeenTime, PEL: []string{}}
			for _, p := range g.PEL {
				if string(p.Consumer) == cd.Name {
					cd.PEL = append(cd.PEL, idString(p.ID))
				}
			}
			gd.Consumers = append(gd.Consumers, cd)
		}
		sort.Slice(gd.Consumers, func(i, j int) bool { return gd.Consumers[i].Name < gd.Consumers[j].Name })
		d.Groups = append(d.Groups, gd)
	}
	sort.Slice(d.Groups, func(i, j int) bool { return d.Groups[i].Name < d.Groups[j].Name })
	return d
}

// escaped returns ds with every string that is not valid UTF-8 written
// as "hex:" and its bytes in hex, so that JSON keeps binary values exactly.
func (ds dataset) escaped() dataset {
	out := dataset{}
	for db, keys := range ds {
		out[db] = map[string]*keyDesc{}
		for k, v := range keys {
			out[db][esc(k)] = v.escaped()
		}
	}
	return out
}

func esc(s string) string {
	if utf8.ValidString(s) && !strings.HasPrefix(s, "hex:") {
		return s
	}
	return "hex:" + hex.EncodeToString([]byte(s))
}

func escAll(ss []string) []string {
	for i := range ss {
		ss[i] = esc(ss[i])
	}
	return ss
}

func (k *keyDesc) escaped() *keyDesc {
	c := *k
	if k.Str != nil {
		s := esc(*k.Str)
		c.Str = &s
	}
	c.List = escAll(slices.Clone(k.List))
	c.Set = escAll(slices.Clone(k.Set))
	if k.ZSet != nil {
		c.ZSet = slices.Clone(k.ZSet)
		for i := range c.ZSet {
			c.ZSet[i][0] = esc(c.ZSet[i][0])
		}
	}
	if k.Hash != nil {
		c.Hash = map[string]string{}
		for f, v := range k.Hash {
			c.Hash[esc(f)] = esc(v)
		}
	}
	if k.Stream != nil {
		s := *k.Stream
		s.Entries = slices.Clone(s.Entries)
		for i := range s.Entries {
			s.Entries[i].Fields = escAll(slices.Clone(s.Entries[i].Fields))
		}
		s.Groups = slices.Clone(s.Groups)
		for i := range s.Groups {
			g := &s.Groups[i]
			g.Name = esc(g.Name)
			g.PEL = slices.Clone(g.PEL)
			for j := range g.PEL {
				g.PEL[j].Consumer = esc(g.PEL[j].Consumer)
			}
			g.Consumers = slices.Clone(g.Consumers)
			for j := range g.Consumers {
				g.Consumers[j].Name = esc(g.Consumers[j].Name)
			}
		}
		c.Stream = &s
	}
	return &c
}

// loadDataset loads an RDB file with Load and describes it.
func loadDataset(t testing.TB, data []byte) (dataset, Info) {
	t.Helper()
	ds := dataset{}
	info, err := Load(bytes.NewReader(data), func(e *Entry) error {
		if ds[e.DB] == nil {
			ds[e.DB] = map[string]*keyDesc{}
		}
		if _, dup := ds[e.DB][string(e.Key)]; dup {
			return fmt.Errorf("key %q twice in db %d", e.Key, e.DB)
		}
		ds[e.DB][string(e.Key)] = describeEntry(e)
		return nil
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return ds.escaped(), info
}

// describeServer reads every key of dbs from a real redis-server through
// go-redis.
func describeServer(t testing.TB, s *redisServer, dbs ...int) dataset {
	t.Helper()
	ctx := context.Background()
	ds := dataset{}
	for _, db := range dbs {
		c := s.client(db)
		keys, err := c.Keys(ctx, "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 {
			continue
		}
		ds[db] = map[string]*keyDesc{}
		for _, key := range keys {
			ds[db][key] = describeKey(t, c, key)
		}
	}
	return ds.escaped()
}

func describeKey(t testing.TB, c *redis.Client, key string) *keyDesc {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
	}
	typ, err := c.Type(ctx, key).Result()
	must(err)
	k := &keyDesc{Type: typ}
	at, err := c.Do(ctx, "PEXPIRETIME", key).Int64()
	must(err)
	if at > 0 {
		k.ExpireAt = at
	}
	switch typ {
	case "string":
		v, err := c.Get(ctx, key).Result()
		must(err)
		k.Str = &v
	case "list":
		k.List, err = c.LRange(ctx, key, 0, -1).Result()
		must(err)
	case "set":
		k.Set, err = c.SMembers(ctx, key).Result()
		must(err)
		sort.Strings(k.Set)
	case "zset":
		raw, err := c.Do(ctx, "ZRANGE", key, 0, -1, "WITHSCORES").StringSlice()
		must(err)
		for i := 0; i+1 < len(raw); i += 2 {
			k.ZSet = append(k.ZSet, [2]string{raw[i], normScore(t, raw[i+1])})
		}
		sortZSet(k.ZSet)
	case "hash":
		k.Hash, err = c.HGetAll(ctx, key).Result()
		must(err)
	case "stream":
		k.Stream = describeServerStream(t, c, key)
	default:
		t.Fatalf("key %q has type %q", key, typ)
	}
	return k
}

// describeServerStream reads a stream with XRANGE (fields in order) and
// XINFO STREAM FULL COUNT 0 (metadata, groups, PELs, consumers).
func describeServerStream(t testing.TB, c *redis.Client, key string) *streamDesc {
	t.Helper()
	ctx := context.Background()
	sd := &streamDesc{Entries: []entryDesc{}, Groups: []groupDesc{}}
	raw, err := c.Do(ctx, "XRANGE", key, "-", "+").Slice()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range raw {
		e := r.([]any)
		ed := entryDesc{ID: e[0].(string), Fields: []string{}}
		for _, f := range e[1].([]any) {
			ed.Fields = append(ed.Fields, f.(string))
		}
		sd.Entries = append(sd.Entries, ed)
	}
	info, err := c.Do(ctx, "XINFO", "STREAM", key, "FULL", "COUNT", 0).Slice()
	if err != nil {
		t.Fatal(err)
	}
	m := pairsMap(info)
	sd.Length = uint64(m["length"].(int64))
	sd.LastID = m["last-generated-id"].(string)
	sd.FirstID = m["recorded-first-entry-id"].(string)
	sd.MaxDeletedID = m["max-deleted-entry-id"].(string)
	sd.EntriesAdded = uint64(m["entries-added"].(int64))
	for _, g := range asSlice(m["groups"]) {
		gm := pairsMap(g.([]any))
		gd := groupDesc{Name: gm["name"].(string), LastID: gm["last-delivered-id"].(string),
			EntriesRead: -1, PEL: []pendingDesc{}, Consumers: []consumerDesc{}}
		if er, ok := gm["entries-read"].(int64); ok {
			gd.EntriesRead = er
		}
		for _, p := range asSlice(gm["pending"]) {
			pa := p.([]any)
			gd.PEL = append(gd.PEL, pendingDesc{ID: pa[0].(string), Consumer: pa[1].(string),
				DeliveryTime: pa[2].(int64), DeliveryCount: uint64(pa[3].(int64))})
		}
		for _, cc := range asSlice(gm["consumers"]) {
			cm := pairsMap(cc.([]any))
			cd := consumerDesc{Name: cm["name"].(string), SeenTime: cm["seen-time"].(int64), PEL: []string{}}
			for _, p := range asSlice(cm["pending"]) {
				cd.PEL = append(cd.PEL, p.([]any)[0].(string))
			}
			gd.Consumers = append(gd.Consumers, cd)
		}
		sort.Slice(gd.Consumers, func(i, j int) bool { return gd.Consumers[i].Name < gd.Consumers[j].Name })
		sd.Groups = append(sd.Groups, gd)
	}
	sort.Slice(sd.Groups, func(i, j int) bool { return sd.Groups[i].Name < sd.Groups[j].Name })
	return sd
}

func pairsMap(a []any) map[string]any {
	m := map[string]any{}
	for i := 0; i+1 < len(a); i += 2 {
		m[a[i].(string)] = a[i+1]
	}
	return m
}

// diffDatasets lists the differences between want and got, one per line.
func diffDatasets(want, got dataset) []string {
	var diffs []string
	dbs := map[int]bool{}
	for db := range want {
		dbs[db] = true
	}
	for db := range got {
		dbs[db] = true
	}
	for db := range dbs {
		keys := map[string]bool{}
		for k := range want[db] {
			keys[k] = true
		}
		for k := range got[db] {
			keys[k] = true
		}
		for k := range keys {
			w, g := want[db][k], got[db][k]
			switch {
			case w == nil:
				diffs = append(diffs, fmt.Sprintf("db %d key %q: unexpected", db, k))
			case g == nil:
				diffs = append(diffs, fmt.Sprintf("db %d key %q: missing", db, k))
			default:
				wj, _ := json.Marshal(w)
				gj, _ := json.Marshal(g)
				if !bytes.Equal(wj, gj) {
					i := 0
					for i < len(wj) && i < len(gj) && wj[i] == gj[i] {
						i++
					}
					from := max(0, i-200)
					diffs = append(diffs, fmt.Sprintf("db %d key %q differs from byte %d of its JSON:\n want ...%s\n  got ...%s",
						db, k, i, clipStr(wj[from:]), clipStr(gj[from:])))
				}
			}
		}
	}
	slices.Sort(diffs)
	return diffs
}

func clipStr(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

func requireSame(t testing.TB, what string, want, got dataset) {
	t.Helper()
	if d := diffDatasets(want, got); len(d) > 0 {
		t.Fatalf("%s: %d differences:\n%s", what, len(d), strings.Join(d, "\n"))
	}
}

// keyCount is the number of keys in ds.
func (ds dataset) keyCount() int {
	n := 0
	for _, m := range ds {
		n += len(m)
	}
	return n
}

// asSlice is v as an array reply; an empty array may come back as nil.
func asSlice(v any) []any {
	a, _ := v.([]any)
	return a
}
