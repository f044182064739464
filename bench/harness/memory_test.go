package harness

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/resp"
)

func TestMemoryArithmetic(t *testing.T) {
	m := &MemoryResult{
		Shape: "hash", Command: "HSET ...", Keys: 1000,
		SvcDB: MemorySide{
			RSSBefore: 10_000_000, RSSAfter: 10_150_000, // 150 B/key
			UsedBefore: 0, UsedAfter: 90_000, HasUsed: true, // 90 B/key
			HeapBefore: 2_000_000, HeapAfter: 2_120_000, HasHeap: true, // 120 B/key
			Keys: 1000,
		},
		Redis: MemorySide{
			RSSBefore: 8_000_000, RSSAfter: 8_100_000, // 100 B/key
			UsedBefore: 900_000, UsedAfter: 980_000, HasUsed: true, // 80 B/key
			Keys: 1000,
		},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(m.SvcDB.RSSPerKey(m.Keys), 150) || !near(m.SvcDB.UsedPerKey(m.Keys), 90) || !near(m.SvcDB.HeapPerKey(m.Keys), 120) {
		t.Errorf("svcdb per key: %v %v %v", m.SvcDB.RSSPerKey(m.Keys), m.SvcDB.UsedPerKey(m.Keys), m.SvcDB.HeapPerKey(m.Keys))
	}
	if !near(m.Redis.RSSPerKey(m.Keys), 100) || !near(m.Redis.UsedPerKey(m.Keys), 80) {
		t.Errorf("redis per key: %v %v", m.Redis.RSSPerKey(m.Keys), m.Redis.UsedPerKey(m.Keys))
	}
	if !near(m.RSSRatio(), 1.5) || !near(m.UsedRatio(), 1.875) {
		t.Errorf("ratios %v %v; want 1.5 and 1.875", m.RSSRatio(), m.UsedRatio())
	}
	if got := strings.Join(m.cells(), " "); got != "hash 1000 150.0 90.0 120.0 80.0 100.0 1.50 1.88" {
		t.Errorf("cells %q", got)
	}
	if perKey(1, 2, 0) != 0 {
		t.Error("perKey with no keys must be 0")
	}

	// A side that failed has no figures and no ratio; a server without
	// used_memory shows "-" there.
	f := *m
	f.SvcDB = MemorySide{Failure: "ERR unknown command 'HSET'"}
	f.Redis.HasUsed = false
	if f.RSSRatio() != 0 || f.UsedRatio() != 0 {
		t.Errorf("failed side: ratios %v %v", f.RSSRatio(), f.UsedRatio())
	}
	if got := strings.Join(f.cells(), " "); got != "hash 1000 - - - - 100.0 - -" {
		t.Errorf("failed cells %q", got)
	}
	rep := &MemoryReport{Connections: 4, Pipeline: 256, Results: []*MemoryResult{m, &f}}
	if fl := rep.Failures(); len(fl) != 1 || fl[0] != "hash on svcdb: ERR unknown command 'HSET'" {
		t.Errorf("failures %q", fl)
	}
	var tb, md, js bytes.Buffer
	if err := rep.WriteTable(&tb); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"svcdb RSS B/key", "redis used_memory B/key", "150.0", "1.50", "FAILED hash on svcdb"} {
		if !strings.Contains(tb.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tb.String())
		}
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| hash | 1000 | 150.0 | 90.0 | 120.0 | 80.0 | 100.0 | 1.50 | 1.88 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if err := rep.WriteJSON(&js); err != nil || !strings.Contains(js.String(), `"rss_after": 10150000`) {
		t.Errorf("json: %v\n%s", err, js.String())
	}
}

// Every shape's command is well-formed RESP with the key and values the
// docs promise.
func TestMemoryShapeCommands(t *testing.T) {
	want := map[string][]string{
		"string": {"SET", "key:42", "v0000000000000000000000000000042"},
		"hash":   {"HSET", "key:42", "f1", "a000000042", "f2", "b000000042", "f3", "c000000042"},
		"set":    {"SADD", "key:42", "a000000042", "b000000042", "c000000042"},
		"zset":   {"ZADD", "key:42", "1", "a000000042", "2", "b000000042", "3", "c000000042"},
		"list":   {"RPUSH", "key:42", "a000000042", "b000000042", "c000000042"},
	}
	for _, s := range MemoryShapes {
		cmd := s.appendCmd(nil, 42)
		rp, n, err := resp.ReadReply(cmd)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		var got []string
		for _, e := range rp.Elems {
			got = append(got, string(e.Str))
		}
		if strings.Join(got, " ") != strings.Join(want[s.Name], " ") {
			t.Errorf("%s: %q; want %q", s.Name, got, want[s.Name])
		}
		if n != len(cmd) {
			t.Errorf("%s: bytes after the command", s.Name)
		}
	}
	// Values keep their length for any key number.
	if v := appendValue(nil, 'a', 9, 12345678901); string(v) != "$10\r\na345678901\r\n" {
		t.Errorf("appendValue of a long number: %q", v)
	}
}

func TestMemoryValidate(t *testing.T) {
	c := DefaultMemoryConfig()
	c.SvcDB.Path = "bin/svcdb"
	if err := c.Validate(); err != nil {
		t.Fatalf("default: %v", err)
	}
	c.Shapes = []string{"string", "blob"}
	c.Keys = 0
	err := c.Validate()
	for _, want := range []string{`shape "blob"`, "keys 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %q", err, want)
		}
	}
}

// TestMemoryShapeKeys: a shape written name@N loads N keys instead of
// Keys; the default shapes end with the string shape at 10M keys (issue
// 20), and a report whose shapes differ in keys says so.
func TestMemoryShapeKeys(t *testing.T) {
	c := DefaultMemoryConfig()
	if got := c.Shapes[len(c.Shapes)-1]; got != "string@10000000" {
		t.Errorf("last default shape %q, want string@10000000", got)
	}
	for _, tc := range []struct {
		entry string
		keys  int
		ok    bool
	}{{"string", 0, true}, {"string@10000000", 10_000_000, true}, {"hash@5", 5, true},
		{"string@0", 0, false}, {"string@x", 0, false}, {"blob@5", 0, false}} {
		shape, keys, ok := lookupShape(tc.entry)
		if ok != tc.ok || keys != tc.keys || (ok && !strings.HasPrefix(tc.entry, shape.Name)) {
			t.Errorf("lookupShape(%q) = %q, %d, %v; want %d, %v", tc.entry, shape.Name, keys, ok, tc.keys, tc.ok)
		}
	}
	rep := &MemoryReport{Results: []*MemoryResult{{Shape: "string", Keys: 1000}, {Shape: "string", Keys: 10_000_000}}}
	if got := rep.keys(); got != "the keys of the table's keys column" {
		t.Errorf("mixed keys: %q", got)
	}
	rep.Results = rep.Results[:1]
	if got := rep.keys(); got != "1000 keys" {
		t.Errorf("one count: %q", got)
	}
}
