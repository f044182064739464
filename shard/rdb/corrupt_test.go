package rdb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/svcdb/svcdb/shard/values"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// smallFixture is a small file of every kind, for byte-by-byte tests.
func smallFixture(t testing.TB) []byte {
	t.Helper()
	return encodeFile(t, []Entry{
		{Key: []byte("s"), Kind: values.KindString, Str: []byte("a value long enough to matter"), ExpireAt: 1893456000000},
		{Key: []byte("n"), Kind: values.KindString, Str: []byte("-12345")},
		{Key: []byte("l"), Kind: values.KindList, Elems: bs("a", "1", "")},
		{Key: []byte("set"), Kind: values.KindSet, Elems: bs("x", "2")},
		{Key: []byte("h"), Kind: values.KindHash, Pairs: bs("f", "v", "g", "100000")},
		{Key: []byte("z"), Kind: values.KindZSet, ZSet: []ZMember{{[]byte("m"), 1.5}, {[]byte("o"), -2}}},
		{DB: 1, Key: []byte("st"), Kind: values.KindStream, Stream: &Stream{
			Entries: []StreamEntry{{ID: StreamID{5, 0}, Fields: bs("a", "1")}, {ID: StreamID{5, 1}, Fields: bs("a", "2", "b", "3")}},
			Length:  2, LastID: StreamID{5, 1}, FirstID: StreamID{5, 0}, EntriesAdded: 2,
			Groups: []StreamGroup{{Name: []byte("g"), LastID: StreamID{5, 0}, EntriesRead: 1,
				PEL:       []StreamPending{{ID: StreamID{5, 0}, DeliveryTime: 1000, DeliveryCount: 1, Consumer: []byte("c")}},
				Consumers: []StreamConsumer{{Name: []byte("c"), SeenTime: 1000}}}},
		}},
	})
}

// loadQuietly runs Load, failing the test on a panic-turned-error, an
// error not in Load's format, or a load that takes too long.
func loadQuietly(t testing.TB, data []byte, wrap func([]byte) *bytes.Reader) error {
	t.Helper()
	start := time.Now()
	var r = wrap(data)
	_, err := Load(r, func(*Entry) error { return nil })
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Load of %d bytes took %v", len(data), d)
	}
	if err != nil && (!strings.HasPrefix(err.Error(), "rdb: offset ") || strings.Contains(err.Error(), "internal error")) {
		t.Fatalf("Load of %d bytes: unexpected error form: %v", len(data), err)
	}
	return err
}

func testFiles(t *testing.T) map[string][]byte {
	files := map[string][]byte{"small": smallFixture(t)}
	for _, name := range []string{"old-v9", "redis-7.0"} {
		data, err := os.ReadFile(filepath.Join("testdata", name+".rdb"))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	return files
}

// TestTruncatedEveryOffset: every proper prefix of a valid file is an
// error naming an offset, never a panic, a hang or a success.
func TestTruncatedEveryOffset(t *testing.T) {
	for name, data := range testFiles(t) {
		if err := loadQuietly(t, data, bytes.NewReader); err != nil {
			t.Fatalf("%s: the whole file fails: %v", name, err)
		}
		step := 1
		if len(data) > 10000 {
			step = 23 // the large golden file: a sample of offsets keeps this fast
		}
		for n := 0; n < len(data); n += step {
			if err := loadQuietly(t, data[:n], bytes.NewReader); err == nil {
				t.Fatalf("%s truncated to %d of %d bytes loads without error", name, n, len(data))
			}
		}
	}
	// Through a reader that returns one byte at a time, every buffer refill
	// path is exercised too.
	data := testFiles(t)["old-v9"]
	for n := 0; n < len(data); n++ {
		_, err := Load(iotest.OneByteReader(bytes.NewReader(data[:n])), func(*Entry) error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), "rdb: offset ") {
			t.Fatalf("old-v9 truncated to %d through OneByteReader: %v", n, err)
		}
	}
	if _, err := Load(iotest.OneByteReader(bytes.NewReader(data)), func(*Entry) error { return nil }); err != nil {
		t.Fatalf("old-v9 through OneByteReader: %v", err)
	}
}

// TestFlippedByte: changing any one byte of a file is an error (the
// checksum catches what the parser does not), never a panic.
func TestFlippedByte(t *testing.T) {
	for name, data := range testFiles(t) {
		if len(data) > 10000 {
			continue
		}
		sums := 0
		for i := range data {
			c := bytes.Clone(data)
			c[i] ^= 0x5A
			err := loadQuietly(t, c, bytes.NewReader)
			if err == nil {
				t.Fatalf("%s with byte %d flipped loads without error", name, i)
			}
			if strings.Contains(err.Error(), "checksum") {
				sums++
			}
		}
		t.Logf("%s: %d flips, %d caught by the checksum, the rest by the parser", name, len(data), sums)
	}
	// A flip inside a string value can only be caught by the checksum.
	data := smallFixture(t)
	at := bytes.Index(data, []byte("long enough"))
	data[at] ^= 1
	if err := loadQuietly(t, data, bytes.NewReader); err == nil || !strings.Contains(err.Error(), "wrong RDB checksum") {
		t.Fatalf("flip inside a value: %v", err)
	}
}

// FuzzLoad: no input makes Load panic, hang, or allocate without bound;
// whatever it accepts survives a round trip through our encoder. Seeds:
// testdata/fuzz/FuzzLoad (written by -regenerate) and the golden files.
// Run: go test ./shard/rdb -run '^$' -fuzz FuzzLoad -fuzztime 60s
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"old-v9"} {
		if data, err := os.ReadFile(filepath.Join("testdata", name+".rdb")); err == nil {
			f.Add(data)
		}
	}
	f.Add(smallFixture(f))
	f.Fuzz(fuzzLoadOne)
}

// fuzzLoadOne is FuzzLoad's property for one input.
func fuzzLoadOne(t *testing.T, data []byte) {
	{
		before := allocatedBytes()
		var descs []string
		_, err := Load(bytes.NewReader(data), func(e *Entry) error {
			if e.Kind < values.KindString || e.Kind > values.KindStream {
				t.Fatalf("entry of kind %d", e.Kind)
			}
			js, _ := json.Marshal(describeEntry(e))
			descs = append(descs, fmt.Sprintf("%d %q %s", e.DB, e.Key, js))
			return nil
		})
		after := allocatedBytes()
		// Allocation bound: the decoder's 64 KiB buffer and first chunks,
		// plus what the input can honestly expand to (LZF at most 88x,
		// decoded into slices of at most a few dozen bytes per input byte).
		if alloc, limit := after-before, uint64(4<<20+20000*len(data)); alloc > limit {
			t.Fatalf("Load of %d bytes allocated %d bytes (limit %d)", len(data), alloc, limit)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "rdb: offset ") || strings.Contains(err.Error(), "internal error") {
				t.Fatalf("error form: %v", err)
			}
			return
		}
		// Accepted: our encoder writes it back, and it loads the same.
		var entries []Entry
		if _, err := Load(bytes.NewReader(data), func(e *Entry) error { entries = append(entries, *e); return nil }); err != nil {
			t.Fatalf("loads once but not twice: %v", err)
		}
		var again []string
		if _, err := Load(bytes.NewReader(encodeFile(t, entries)), func(e *Entry) error {
			js, _ := json.Marshal(describeEntry(e))
			again = append(again, fmt.Sprintf("%d %q %s", e.DB, e.Key, js))
			return nil
		}); err != nil {
			t.Fatalf("re-encoded file fails: %v", err)
		}
		if strings.Join(descs, "\n") != strings.Join(again, "\n") {
			t.Fatalf("round trip differs:\n%s\n---\n%s", strings.Join(descs, "\n"), strings.Join(again, "\n"))
		}
	}
}

// allocatedBytes is the heap bytes allocated so far by the process (read
// without stopping the world, unlike runtime.ReadMemStats).
func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// regenerateSeeds writes the fuzz seed corpus: the small fixture, the old
// file and a small dump from a real redis-server.
func regenerateSeeds(t *testing.T) {
	dir := t.TempDir()
	srv := startRedis(t, dir, "dump.rdb")
	ctx := context.Background()
	c := srv.client(0)
	for _, args := range [][]any{
		{"SET", "s", "value"}, {"SET", "i", "42"}, {"SET", "lzf", strings.Repeat("ab", 40)},
		{"RPUSH", "l", "a", "2"}, {"SADD", "is", "1", "2"}, {"SADD", "ss", "x"},
		{"ZADD", "z", "1", "a", "inf", "b"}, {"HSET", "h", "f", "v"}, {"PEXPIRE", "h", "100000000"},
		{"XADD", "x", "1-1", "f", "v"}, {"XADD", "x", "1-2", "f", "w"}, {"XDEL", "x", "1-1"},
		{"XGROUP", "CREATE", "x", "g", "0"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"},
	} {
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	redisDump, err := os.ReadFile(srv.save("dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(filepath.Join("testdata", "old-v9.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{"small-ours": smallFixture(t), "old-v9": old, "small-redis": redisDump}
	corpus := filepath.Join("testdata", "fuzz", "FuzzLoad")
	if err := os.MkdirAll(corpus, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(corpus, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
