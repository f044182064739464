package aof

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCommandReader: any input parses without panicking; offsets only grow
// and stay inside the input; and what was read, written back as canonical
// RESP, reads back the same. Seeds are in testdata/fuzz/FuzzCommandReader.
func FuzzCommandReader(f *testing.F) {
	f.Add(append(enc("SET", "a", "1"), enc("MULTI")...))
	f.Add([]byte("#TS:1\r\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("*2\r\n$-1\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewCommandReader(bytes.NewReader(data), int64(len(data)))
		var canon []byte
		var cmds []string
		last := int64(0)
		for {
			args, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var pe *ParseError
			if err != nil {
				if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > int64(len(data)) {
					t.Fatalf("error %v", err)
				}
				break
			}
			if rd.Offset() <= last || rd.Offset() > int64(len(data)) {
				t.Fatalf("offset %d after %d (input %d bytes)", rd.Offset(), last, len(data))
			}
			last = rd.Offset()
			strs := make([]string, len(args))
			for i, a := range args {
				strs[i] = string(a)
			}
			canon = append(canon, enc(strs...)...)
			cmds = append(cmds, strings.Join(strs, "\x00"))
		}
		rd = NewCommandReader(bytes.NewReader(canon), int64(len(canon)))
		for i := 0; ; i++ {
			args, err := rd.Next()
			if errors.Is(err, io.EOF) {
				if i != len(cmds) {
					t.Fatalf("canonical form has %d commands; want %d", i, len(cmds))
				}
				return
			}
			if err != nil {
				t.Fatalf("canonical form: %v", err)
			}
			if got := string(bytes.Join(args, []byte{0})); got != cmds[i] {
				t.Fatalf("command %d: %q; want %q", i, got, cmds[i])
			}
		}
	})
}

// FuzzLoad loads an AOF whose last incremental file holds the fuzz input.
// It never panics; with aof-load-truncated a successful load leaves a file
// that then loads cleanly, to the same commands. Seeds are in
// testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	f.Add(append(enc("SELECT", "0"), enc("SET", "a", "1")...), true)
	f.Add(append(enc("MULTI"), enc("SET", "a", "1")...), true)
	f.Add(enc("SET", "a", "1")[:9], false)
	f.Fuzz(func(t *testing.T, data []byte, truncatedOK bool) {
		dir := filepath.Join(t.TempDir(), "appendonlydir")
		writeAOFDir(t, dir, enc("SET", "first", "file"), data)
		load := func(truncOK bool) ([]string, LoadInfo, error) {
			var cmds []string
			info, err := Load(dir, DefaultFilename, truncOK,
				func(string, bool) error { return nil },
				func(args [][]byte) error { cmds = append(cmds, cmdText(args)); return nil })
			return cmds, info, err
		}
		cmds, info, err := load(truncatedOK)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("not a LoadError: %v", err)
			}
			if st, _ := os.Stat(filepath.Join(dir, incrName(DefaultFilename, 2))); st.Size() != int64(len(data)) {
				t.Fatal("a failed load changed the file")
			}
			return
		}
		if !truncatedOK && info.Truncated {
			t.Fatal("truncated without aof-load-truncated")
		}
		again, info2, err := load(false)
		if err != nil || info2.Truncated || strings.Join(again, "\n") != strings.Join(cmds, "\n") {
			t.Fatalf("reload after %+v: %v %+v\n%q\n%q", info, err, info2, again, cmds)
		}
	})
}
