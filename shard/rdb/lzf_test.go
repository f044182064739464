package rdb

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLZFRoundTrip: what the compressor writes, Redis' LZF decoder
// (lzfDecompress, golden-tested against Redis' files) reads back, for
// compressible, random and mixed inputs of every length up to 2 KiB.
func TestLZFRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := NewCompressor()
	compressed := 0
	for n := lzfMinInput; n < 2048; n += 1 + n/16 {
		for _, kind := range []string{"repeat", "random", "text", "mixed"} {
			in := make([]byte, n)
			switch kind {
			case "repeat":
				for i := range in {
					in[i] = "abc"[i%3]
				}
			case "random":
				for i := range in {
					in[i] = byte(rng.IntN(256))
				}
			case "text":
				words := []string{"value", "of", "a", "key", "svcdb", "redis", " "}
				var b strings.Builder
				for b.Len() < n {
					b.WriteString(words[rng.IntN(len(words))])
				}
				copy(in, b.String())
			case "mixed":
				for i := range in {
					if rng.IntN(4) == 0 {
						in[i] = byte(rng.IntN(256))
					} else {
						in[i] = 'x'
					}
				}
			}
			enc := c.AppendString(nil, in)
			if enc[0] != 0xC3 {
				if kind == "repeat" {
					t.Fatalf("%s %d bytes: not compressed", kind, n)
				}
				if !bytes.Equal(enc, AppendString(nil, in)) {
					t.Fatalf("%s %d: uncompressed form differs from AppendString", kind, n)
				}
				continue
			}
			compressed++
			// 0xC3, compressed length, original length, data.
			clen, rest := readTestLen(t, enc[1:])
			olen, rest := readTestLen(t, rest)
			if int(olen) != n || int(clen) != len(rest) || int(clen) > n-4 {
				t.Fatalf("%s %d: lengths %d/%d, data %d", kind, n, clen, olen, len(rest))
			}
			out := make([]byte, n)
			if err := lzfDecompress(rest, out); err != nil {
				t.Fatalf("%s %d: %v", kind, n, err)
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("%s %d: round trip differs", kind, n)
			}
		}
	}
	if compressed < 100 {
		t.Fatalf("only %d inputs compressed", compressed)
	}
}

func readTestLen(t *testing.T, b []byte) (uint64, []byte) {
	t.Helper()
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3f), b[1:]
	case 1:
		return uint64(b[0]&0x3f)<<8 | uint64(b[1]), b[2:]
	case 2:
		if b[0] == 0x80 {
			return uint64(b[1])<<24 | uint64(b[2])<<16 | uint64(b[3])<<8 | uint64(b[4]), b[5:]
		}
	}
	t.Fatalf("unexpected length byte %#x", b[0])
	return 0, nil
}

// TestLZFFileAcceptedByRedis: a file whose strings are compressed passes
// redis-check-rdb (which decompresses every string) and loads back equal.
func TestLZFFileAcceptedByRedis(t *testing.T) {
	bin, err := exec.LookPath("redis-check-rdb")
	if err != nil {
		t.Fatal("redis-check-rdb is required (make test installs redis-tools)")
	}
	c := NewCompressor()
	var body []byte
	want := map[string]string{}
	for i := range 200 {
		key := []byte("key:" + strings.Repeat("k", i%40) + string(rune('a'+i%26)))
		val := []byte(strings.Repeat("value-"+string(rune('a'+i%26)), 1+i%50))
		body = AppendKey(body, TypeString, key, 0)
		body = c.AppendString(body, val)
		want[string(key)] = string(val)
	}
	var file bytes.Buffer
	w := NewWriter(&file)
	if err := w.Header([2]string{"redis-ver", "7.0.15"}); err != nil {
		t.Fatal(err)
	}
	if err := w.SelectDB(0, uint64(len(want)), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(body); err != nil {
		t.Fatal(err)
	}
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dump.rdb")
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	got := map[string]string{}
	if _, err := Load(bytes.NewReader(file.Bytes()), func(e *Entry) error {
		got[string(e.Key)] = string(e.Str)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("%s: got %q", k, got[k])
		}
	}
	if file.Len() > 200*60 {
		t.Errorf("file of %d bytes: the strings were not compressed", file.Len())
	}
}

func BenchmarkLZFCompress100(b *testing.B) {
	c := NewCompressor()
	in := []byte(strings.Repeat("value-of-a-key-", 7))
	var dst []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		dst = c.AppendString(dst[:0], in)
	}
}
