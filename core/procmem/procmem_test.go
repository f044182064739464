package procmem

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"testing"
)

func TestParseStatm(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"5120 1234 300 10 0 900 0\n", 1234 * 4096, true},
		{"1 0", 0, true},
		{"", 0, false},
		{"12", 0, false},
		{"12 x 3", 0, false},
		{"12 -1 3", 0, false},
	} {
		got, err := parseStatm([]byte(c.in), 4096)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseStatm(%q) = %d, %v", c.in, got, err)
		}
	}
}

// TestResidentMatchesStatus: Resident agrees with VmRSS of
// /proc/self/status, read just before and after, and follows 64 MiB that
// this test touches.
func TestResidentMatchesStatus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	vmRSS := func() int64 {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(l, []byte("VmRSS:")); ok {
				n, _ := strconv.ParseInt(string(bytes.Fields(rest)[0]), 10, 64)
				return n << 10
			}
		}
		t.Fatal("no VmRSS")
		return 0
	}
	before := vmRSS()
	got, err := Resident()
	after := vmRSS()
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := min(before, after)-1<<20, max(before, after)+1<<20
	if got < lo || got > hi {
		t.Errorf("Resident %d, VmRSS %d..%d", got, before, after)
	}
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	grown, _ := Resident()
	if grown < got+60<<20 {
		t.Errorf("after touching 64 MiB: %d, before %d", grown, got)
	}
	runtime.KeepAlive(buf)
}
