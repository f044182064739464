package hugeheap

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestParseMapsLine(t *testing.T) {
	for _, c := range []struct {
		in   string
		want span
		ok   bool
	}{
		{"c000000000-c004000000 rw-p 00000000 00:00 0 ", span{0xc000000000, 0xc004000000}, true},
		{"7fe4dc00000-7fe4e400000 rw-p 00000000 00:00 0                          [anon:Go: heap]", span{0x7fe4dc00000, 0x7fe4e400000}, true},
		{"3ff0c000000-3ff0dc00000 ---p 00000000 00:00 0 ", span{}, false}, // reserved arena space
		{"00795000-007b9000 rw-p 00195000 fe:00 9978294    /bin/svcdb", span{}, false},
		{"7ffd78270000-7ffd78291000 rw-p 00000000 00:00 0                          [stack]", span{}, false},
		{"7fe2fe328000-7fe2fe590000 rw-s 00000000 00:01 12 /dev/zero (deleted)", span{}, false},
		{"zz-10 rw-p 00000000 00:00 0", span{}, false},
		{"", span{}, false},
	} {
		got, ok := parseMapsLine([]byte(c.in))
		if ok != c.ok || got != c.want {
			t.Errorf("parseMapsLine(%q) = %x, %v", c.in, got, ok)
		}
	}
}

func TestSubtractInsert(t *testing.T) {
	var done []span
	done = insert(done, span{10, 20})
	done = insert(done, span{30, 40})
	done = insert(done, span{20, 30}) // merges all three
	if len(done) != 1 || done[0] != (span{10, 40}) {
		t.Fatalf("insert: %v", done)
	}
	done = insert(done, span{50, 60})
	for _, c := range []struct {
		m    span
		want []span
	}{
		{span{0, 10}, []span{{0, 10}}},
		{span{0, 70}, []span{{0, 10}, {40, 50}, {60, 70}}},
		{span{15, 35}, nil},
		{span{35, 55}, []span{{40, 50}}},
	} {
		got := subtract(c.m, done)
		if len(got) != len(c.want) {
			t.Errorf("subtract(%v) = %v, want %v", c.m, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("subtract(%v) = %v, want %v", c.m, got, c.want)
			}
		}
	}
}

func TestParseAnonHuge(t *testing.T) {
	in := "Rss:              220216 kB\nAnonymous:        219000 kB\nAnonHugePages:    210944 kB\nShmemPmdMapped:        0 kB\n"
	if n, err := parseAnonHuge([]byte(in)); err != nil || n != 210944<<10 {
		t.Errorf("parseAnonHuge = %d, %v", n, err)
	}
	if _, err := parseAnonHuge([]byte("Rss: 1 kB\n")); err != ErrNoField {
		t.Errorf("no field: %v", err)
	}
	if _, err := parseAnonHuge([]byte("AnonHugePages: x kB\n")); err == nil {
		t.Error("bad number accepted")
	}
}

// thpMode is the kernel's THP mode ("always", "madvise" or "never"), "" if
// unknown.
func thpMode(t *testing.T) string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	s := string(b)
	if i, j := strings.IndexByte(s, '['), strings.IndexByte(s, ']'); i >= 0 && j > i {
		return s[i+1 : j]
	}
	return ""
}

// TestPassPutsHeapOnHugePages: 64 MiB of the heap, touched on 4 KiB
// pages, are on huge pages after one Pass with Collapse, where the kernel
// allows THP for advised memory; a second pass advises nothing new.
func TestPassPutsHeapOnHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	if m := thpMode(t); m != "madvise" && m != "always" {
		t.Skipf("THP mode %q", m)
	}
	before, err := AnonHugeBytes()
	if err != nil {
		t.Fatal(err)
	}
	blocks := make([][]byte, 64)
	for i := range blocks {
		blocks[i] = make([]byte, 1<<20)
		for j := 0; j < len(blocks[i]); j += 4096 {
			blocks[i][j] = 1
		}
	}
	a := &Advisor{Collapse: true}
	n, err := a.Pass()
	if err != nil {
		t.Fatal(err)
	}
	if n < 64<<20 {
		t.Errorf("advised %d bytes, want at least the 64 MiB allocated", n)
	}
	after, err := AnonHugeBytes()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("advised %d MiB; AnonHugePages %d -> %d MiB", n>>20, before>>20, after>>20)
	if after-before < 32<<20 {
		t.Errorf("AnonHugePages grew by %d bytes, want at least half the 64 MiB", after-before)
	}
	if n2, err := a.Pass(); err != nil || n2 > 8<<20 {
		t.Errorf("second pass advised %d bytes (%v), want only what the heap grew by", n2, err)
	}
	runtime.KeepAlive(blocks)
}
