package replication

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

const id40 = "0123456789abcdef0123456789abcdef01234567"

func TestParsePSyncReply(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want PSyncReply
		err  string
	}{
		{"+FULLRESYNC " + id40 + " 0", PSyncReply{Kind: FullResync, ReplID: id40}, ""},
		{"+FULLRESYNC " + id40 + " 123456", PSyncReply{Kind: FullResync, ReplID: id40, Offset: 123456}, ""},
		{"+FULLRESYNC " + id40[:39] + " 1", PSyncReply{}, "wrong +FULLRESYNC syntax"},
		{"+FULLRESYNC " + id40, PSyncReply{}, "wrong +FULLRESYNC syntax"},
		{"+FULLRESYNC " + id40 + " -5", PSyncReply{}, "offset"},
		{"+FULLRESYNC " + id40 + " x", PSyncReply{}, "offset"},
		{"+CONTINUE", PSyncReply{Kind: Continue}, ""},
		{"+CONTINUE ", PSyncReply{Kind: Continue}, ""},
		{"+CONTINUE " + id40, PSyncReply{Kind: Continue, ReplID: id40}, ""},
		{"+CONTINUE short", PSyncReply{Kind: Continue}, ""},
		{"-NOMASTERLINK Can't SYNC while not connected with my master", PSyncReply{Kind: TryLater}, ""},
		{"-LOADING Redis is loading the dataset in memory", PSyncReply{Kind: TryLater}, ""},
		{"-ERR unknown command 'PSYNC'", PSyncReply{}, "refused"},
		{"+OK", PSyncReply{}, "unexpected"},
		{"", PSyncReply{}, "unexpected"},
	} {
		got, err := ParsePSyncReply([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParsePSyncReply([]byte("-ERR x")); !errors.Is(err, ErrPSyncRefused) {
		t.Errorf("an -ERR is not ErrPSyncRefused: %v", err)
	}
}

func TestParseTransferHeader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		size int64
		mark string
		err  bool
	}{
		{"$0", 0, "", false},
		{"$175", 175, "", false},
		{"$EOF:" + id40, -1, id40, false},
		{"$EOF:" + id40[:10], 0, "", true},
		{"$-1", 0, "", true},
		{"$abc", 0, "", true},
		{"+OK", 0, "", true},
		{"-ERR no", 0, "", true},
		{"$", 0, "", true},
	} {
		got, err := ParseTransferHeader([]byte(tc.in))
		if tc.err {
			if err == nil {
				t.Errorf("%q: no error", tc.in)
			}
			continue
		}
		if err != nil || got.Size != tc.size || string(got.Mark) != tc.mark {
			t.Errorf("%q: %+v, %v", tc.in, got, err)
		}
	}
}

// parseAll runs a Stream over input fed in pieces of at most chunk bytes
// (0: all at once), as the link's loop does, and returns each command with
// the offset after it ran.
func parseAll(input []byte, chunk int, start int64) (cmds []string, offsets []int64, err error) {
	var s Stream
	s.Reset(start)
	var buf []byte
	for fed := 0; ; {
		off := 0
		for off < len(buf) {
			args, n, err := s.Next(buf[off:])
			if err != nil {
				return cmds, offsets, err
			}
			if n == 0 {
				break
			}
			off += n
			s.Commit(args, n)
			cmds = append(cmds, fmt.Sprintf("%q", args))
			offsets = append(offsets, s.Applied)
		}
		buf = append(buf[:0], buf[off:]...)
		if fed == len(input) {
			if s.Read != start+int64(len(input))-int64(len(buf)) {
				return cmds, offsets, fmt.Errorf("Read %d, consumed %d", s.Read-start, len(input)-len(buf))
			}
			return cmds, offsets, nil
		}
		n := len(input) - fed
		if chunk > 0 {
			n = min(n, chunk)
		}
		buf = append(buf, input[fed:fed+n]...)
		fed += n
	}
}

func TestStreamOffsets(t *testing.T) {
	sel := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"                      // 23 bytes
	set := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"              // 27
	multi := "*1\r\n$5\r\nMULTI\r\n"                                // 15
	exec := "*1\r\n$4\r\nEXEC\r\n"                                  // 14
	ping := "*1\r\n$4\r\nPING\r\n"                                  // 14
	getack := "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n" // 37
	in := sel + set + multi + set + set + exec + ping + getack + "\n" + set
	// GETACK counts once processed; the empty line too (Redis counts
	// every byte it consumed from its master).
	want := []int64{123, 150, 150, 150, 150, 150 + 15 + 27 + 27 + 14, 247, 284, 285, 312}
	for _, chunk := range []int{0, 1, 2, 3, 7, 64} {
		cmds, offs, err := parseAll([]byte(in), chunk, 100)
		if err != nil {
			t.Fatalf("chunk %d: %v", chunk, err)
		}
		if fmt.Sprint(offs) != fmt.Sprint(want) {
			t.Errorf("chunk %d: offsets %v, want %v (%v)", chunk, offs, want, cmds)
		}
	}
	// A link broken inside MULTI resumes at the MULTI.
	var s Stream
	s.Reset(0)
	for _, c := range []string{multi, set} {
		args, n, err := s.Next([]byte(c))
		if err != nil || n != len(c) {
			t.Fatal(n, err)
		}
		s.Commit(args, n)
	}
	if !s.InMulti() || s.Applied != 0 || s.Read != int64(len(multi)+len(set)) {
		t.Errorf("inside MULTI: applied %d read %d", s.Applied, s.Read)
	}
	s.DropMulti()
	if s.InMulti() || s.Applied != 0 {
		t.Errorf("after DropMulti: applied %d", s.Applied)
	}
}

func TestAppendAck(t *testing.T) {
	if got := string(AppendAck(nil, 1234)); got != "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$4\r\n1234\r\n" {
		t.Errorf("%q", got)
	}
}

// TestReceiveEOFMark: a diskless payload ends at the mark even when the mark
// arrives split across reads, and a sized one at its length.
func TestReceiveEOFMark(t *testing.T) {
	payload := bytes.Repeat([]byte("REDIS0010-payload-"), 5000)
	for _, split := range []int{1, 7, 39, 40, 41, 1000, 70000} {
		a, b := net.Pipe()
		go func() {
			all := append(append([]byte(nil), payload...), id40...)
			for len(all) > 0 {
				n := min(split, len(all))
				if _, err := a.Write(all[:n]); err != nil {
					return
				}
				all = all[n:]
			}
		}()
		r := New(Config{})
		c := &conn{nc: b, rd: bufio.NewReaderSize(b, 64<<10), timeout: 5 * time.Second, r: r}
		var got bytes.Buffer
		if err := r.receive(c, Transfer{Size: -1, Mark: []byte(id40)}, &got); err != nil {
			t.Fatalf("split %d: %v", split, err)
		}
		if !bytes.Equal(got.Bytes(), payload) {
			t.Errorf("split %d: got %d bytes, want %d", split, got.Len(), len(payload))
		}
		a.Close()
		b.Close()
	}
	a, b := net.Pipe()
	go func() { _, _ = a.Write(append(append([]byte(nil), payload...), "*1\r\n$4\r\nPING\r\n"...)) }()
	r := New(Config{})
	c := &conn{nc: b, rd: bufio.NewReaderSize(b, 64<<10), timeout: 5 * time.Second, r: r}
	var got bytes.Buffer
	if err := r.receive(c, Transfer{Size: int64(len(payload))}, &got); err != nil || !bytes.Equal(got.Bytes(), payload) {
		t.Fatalf("sized: %d bytes, %v", got.Len(), err)
	}
	rest := make([]byte, 14)
	if _, err := c.rd.Read(rest); err != nil || string(rest) != "*1\r\n$4\r\nPING\r\n" {
		t.Errorf("the stream after a sized payload: %q %v", rest, err)
	}
	a.Close()
	b.Close()
}

// FuzzStream: a master's stream (its bytes are input too) parses to the same
// commands and offsets whether it arrives at once or in pieces, never
// panics, and the PSYNC reply and payload header parsers accept any line.
func FuzzStream(f *testing.F) {
	f.Add([]byte("*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"), 3)
	f.Add([]byte("*1\r\n$5\r\nMULTI\r\n*1\r\n$4\r\nEXEC\r\n\n*1\r\n$4\r\nPING\r\n"), 1)
	f.Add([]byte("+FULLRESYNC "+id40+" 0"), 5)
	f.Add([]byte("$EOF:"+id40), 2)
	f.Add([]byte("*1\r\n$-2\r\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, chunk int) {
		_, _ = ParsePSyncReply(in)
		_, _ = ParseTransferHeader(in)
		if len(in) > 1<<16 {
			return
		}
		chunk = 1 + abs(chunk)%64
		c1, o1, e1 := parseAll(in, 0, 0)
		c2, o2, e2 := parseAll(in, chunk, 0)
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("whole: %v, in pieces of %d: %v", e1, chunk, e2)
		}
		if e1 != nil && strings.Contains(e1.Error(), "Read") {
			t.Fatal(e1)
		}
		if fmt.Sprint(c1) != fmt.Sprint(c2) || fmt.Sprint(o1) != fmt.Sprint(o2) {
			t.Fatalf("whole %v %v; pieces of %d %v %v", c1, o1, chunk, c2, o2)
		}
		for i := 1; i < len(o1); i++ {
			if o1[i] < o1[i-1] || o1[i] > int64(len(in)) {
				t.Fatalf("offsets %v", o1)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
