package rdb

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/shard/values"
)

// dumpSeeds are real redis-server 7.0.15 DUMP payloads of every type and
// encoding (written by netloop's TestDumpRestoreCrossServer with
// SVCDB_WRITE_DUMP_SEEDS=1), by file name.
func dumpSeeds(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "dump", "*.bin"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no DUMP payloads in testdata/dump: %v", err)
	}
	seeds := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seeds[filepath.Base(p)] = b
	}
	return seeds
}

// TestDumpPayloadsFromRedis decodes every seed, checks the kind its name
// says, and checks that a wrong version, a wrong checksum, a short payload
// and every truncation of the value are refused with the right error.
func TestDumpPayloadsFromRedis(t *testing.T) {
	kinds := map[string]values.Kind{"str": values.KindString, "hll": values.KindString, "list": values.KindList,
		"set": values.KindSet, "hash": values.KindHash, "zset": values.KindZSet, "stream": values.KindStream}
	for name, p := range dumpSeeds(t) {
		if err := VerifyDumpPayload(p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e, err := ParseDumpValue(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		prefix := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '.' })[0]
		if e.Kind != kinds[prefix] {
			t.Errorf("%s: kind %v, want %v", name, e.Kind, kinds[prefix])
		}
		bad := bytes.Clone(p)
		binary.LittleEndian.PutUint16(bad[len(bad)-10:], Version+1)
		if VerifyDumpPayload(bad) != ErrPayload {
			t.Errorf("%s: version %d accepted", name, Version+1)
		}
		bad = bytes.Clone(p)
		bad[len(bad)-1] ^= 1
		if VerifyDumpPayload(bad) != ErrPayload {
			t.Errorf("%s: wrong checksum accepted", name)
		}
		if VerifyDumpPayload(p[:9]) != ErrPayload {
			t.Errorf("%s: 9 bytes accepted", name)
		}
		body := p[:len(p)-10]
		// Every cut of small payloads; of large ones, a spread of cuts and
		// every cut in the first and last 256 bytes (the quadratic walk
		// over a 15 KB quicklist took minutes under -race).
		step := max(1, len(body)/1024)
		for n := 0; n < len(body); n++ {
			if n > 256 && n < len(body)-256 && n%step != 0 {
				continue
			}
			cut := AppendDumpFooter(bytes.Clone(body[:n]), 0)
			if VerifyDumpPayload(cut) != nil {
				t.Fatalf("%s: footer of a truncation refused", name)
			}
			if _, err := ParseDumpValue(cut); !errors.Is(err, ErrBadDataFormat) {
				t.Fatalf("%s cut to %d bytes: got %v, want Bad data format", name, n, err)
			}
		}
	}
}

// FuzzRestore feeds RESTORE's decoder with values behind a correct footer
// (so the fuzzer reaches the value's decoding, not only the checksum):
// it must never panic or allocate without bound, refuse with
// ErrBadDataFormat, and what it accepts must survive a round trip through
// our encoder. The seed corpus is real redis-server DUMP payloads.
func FuzzRestore(f *testing.F) {
	for _, p := range dumpSeeds(f) {
		f.Add(p[:len(p)-10])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p := AppendDumpFooter(bytes.Clone(body), 0)
		if err := VerifyDumpPayload(p); err != nil {
			t.Fatalf("our own footer refused: %v", err)
		}
		before := allocatedBytes()
		e, err := ParseDumpValue(p)
		// The count is the process', and the fuzzing engine allocates in it
		// too (a 15-byte input once read 1.5 MB): a decode over the limit is
		// measured again, and only one over it every time fails.
		alloc, limit := allocatedBytes()-before, uint64(1<<20+20000*len(p))
		for try := 0; try < 3 && alloc > limit; try++ {
			before = allocatedBytes()
			_, _ = ParseDumpValue(p)
			alloc = min(alloc, allocatedBytes()-before)
		}
		if alloc > limit {
			t.Fatalf("ParseDumpValue of %d bytes allocated %d bytes (limit %d)", len(p), alloc, limit)
		}
		if err != nil {
			if !errors.Is(err, ErrBadDataFormat) || strings.Contains(err.Error(), "internal error") {
				t.Fatalf("error form: %v", err)
			}
			return
		}
		if e.Kind < values.KindString || e.Kind > values.KindStream {
			t.Fatalf("entry of kind %d", e.Kind)
		}
		e.Key = []byte("k")
		want, _ := json.Marshal(describeEntry(e))
		var got []byte
		if _, err := Load(bytes.NewReader(encodeFile(t, []Entry{*e})), func(e *Entry) error {
			got, _ = json.Marshal(describeEntry(e))
			return nil
		}); err != nil {
			t.Fatalf("accepted value does not survive our encoder: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("round trip differs:\n%s\n%s", want, got)
		}
	})
}
