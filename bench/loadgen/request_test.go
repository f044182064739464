package loadgen

import (
	"bufio"
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// parseCommands is an obviously correct reference RESP multibulk reader.
func parseCommands(t *testing.T, b []byte) [][]string {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(b))
	var out [][]string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if line != "" {
				t.Fatalf("trailing bytes %q", line)
			}
			return out
		}
		n, err := strconv.Atoi(strings.TrimSuffix(line[1:], "\r\n"))
		if line[0] != '*' || err != nil {
			t.Fatalf("bad array header %q", line)
		}
		var args []string
		for i := 0; i < n; i++ {
			h, _ := r.ReadString('\n')
			l, err := strconv.Atoi(strings.TrimSuffix(h[1:], "\r\n"))
			if h[0] != '$' || err != nil {
				t.Fatalf("bad bulk header %q", h)
			}
			buf := make([]byte, l+2)
			if _, err := r.Read(buf); err != nil || string(buf[l:]) != "\r\n" {
				t.Fatalf("bad bulk %q", buf)
			}
			args = append(args, string(buf[:l]))
		}
		out = append(out, args)
	}
}

func TestRequestEncoding(t *testing.T) {
	rb := newRequestBuilder("memtier-", 5)
	var buf []byte
	buf = rb.appendSet(buf, 0)
	buf = rb.appendGet(buf, 9)
	buf = rb.appendSet(buf, 10)
	buf = rb.appendGet(buf, 18446744073709551615)
	got := parseCommands(t, buf)
	want := [][]string{
		{"SET", "memtier-0", "xxxxx"},
		{"GET", "memtier-9"},
		{"SET", "memtier-10", "xxxxx"},
		{"GET", "memtier-18446744073709551615"},
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %q; want %q", got, want)
	}
	if l := len(rb.appendSet(nil, 18446744073709551615)); l > rb.maxRequestSize() {
		t.Fatalf("largest SET is %d bytes; maxRequestSize says %d", l, rb.maxRequestSize())
	}
	// Empty prefix and value.
	rb = newRequestBuilder("", 0)
	got = parseCommands(t, rb.appendSet(nil, 7))
	if !slices.EqualFunc(got, [][]string{{"SET", "7", ""}}, slices.Equal) {
		t.Fatalf("empty prefix/value: got %q", got)
	}
}

func TestDecimalDigits(t *testing.T) {
	for _, v := range []uint64{0, 9, 10, 99, 100, 12345, 1<<64 - 1} {
		if got, want := decimalDigits(v), len(strconv.FormatUint(v, 10)); got != want {
			t.Errorf("decimalDigits(%d) = %d; want %d", v, got, want)
		}
	}
}
