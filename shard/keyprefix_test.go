package shard

import (
	"strings"
	"testing"
)

// TestKeysOfEveryPrefixLength runs string commands over keys at the length
// prefix's boundaries (shard/keyspace/object.go, "The key behind one
// pointer": 1 byte under 128, 5 from 128 on) and values that do and do not
// share the key's allocation, through the command handlers. The empty
// value once failed with "ERR internal error" for keys of 16 bytes or more
// (a colocated empty value pointed past its allocation).
func TestKeysOfEveryPrefixLength(t *testing.T) {
	rt, table := newBareRuntime(t, 4)
	p := newProducer(rt, table)
	lengths := []int{0, 1, 10, 15, 16, 17, 127, 128, 129, 1000}
	values := []string{"", "v", strings.Repeat("x", 32), strings.Repeat("y", 100)}
	key := func(n, tag int) string {
		return strings.Repeat(string(rune('a'+tag)), n)
	}
	expect := func(got, want string, what string) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: %q; want %q", what, got[:min(len(got), 60)], want[:min(len(want), 60)])
		}
	}
	for _, n := range lengths {
		for _, val := range values {
			k, other := key(n, 0), key(n+3, 1)
			expect(string(p.do("SET", k, val).Str), "OK", "SET")
			expect(string(p.do("GET", k).Str), val, "GET")
			expect(string(p.do("APPEND", k, "!").Type), ":", "APPEND")
			expect(string(p.do("GET", k).Str), val+"!", "GET after APPEND")
			expect(string(p.do("SET", k, val).Str), "OK", "SET over it")
			expect(string(p.do("RENAME", k, other).Str), "OK", "RENAME")
			expect(string(p.do("GET", other).Str), val, "GET of the renamed key")
			if got := p.do("EXISTS", k).Int; got != 0 {
				t.Fatalf("EXISTS of a renamed key of %d bytes: %d", n, got)
			}
			expect(string(p.do("SET", k, "1").Str), "OK", "SET an integer")
			if got := p.do("INCR", k).Int; got != 2 {
				t.Fatalf("INCR of a key of %d bytes: %d", n, got)
			}
			if got := p.do("DEL", k, other).Int; got != 2 {
				t.Fatalf("DEL of keys of %d and %d bytes: %d", n, n+3, got)
			}
		}
	}
	if got := p.do("DBSIZE").Int; got != 0 {
		t.Fatalf("DBSIZE %d after deleting every key", got)
	}
}
