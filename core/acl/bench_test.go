package acl

import (
	"strings"
	"testing"
)

// BenchmarkAllowsAll is the hot path's whole cost for the default user.
func BenchmarkAllowsAll(b *testing.B) {
	u := New(table).DefaultUser()
	n := 0
	for b.Loop() {
		if u.AllowsAll() {
			n++
		}
	}
	if n == 0 {
		b.Fatal("default user restricted")
	}
}

// BenchmarkCheckRestricted is a restricted user's check of GET on an
// allowed key (command bit, key spec, two patterns).
func BenchmarkCheckRestricted(b *testing.B) {
	a := New(table)
	u, _, err := a.SetUser("r", strings.Fields("on nopass -@all +@read ~other:* %R~cache:*"))
	if err != nil {
		b.Fatal(err)
	}
	args := [][]byte{[]byte("get"), []byte("cache:12345")}
	cmd := table.Lookup(args[0])
	b.ReportAllocs()
	for b.Loop() {
		if r, _ := u.Check(cmd, args); r != OK {
			b.Fatal(r)
		}
	}
}
