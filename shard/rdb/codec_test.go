package rdb

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestCRC64Vector(t *testing.T) {
	// The check value of Redis' crc64 (src/crc64.c's self test).
	if got := crc64Update(0, []byte("123456789")); got != 0xe9c6d914c4b8d9ca {
		t.Fatalf("crc64(123456789) = %#x, want 0xe9c6d914c4b8d9ca", got)
	}
	// Incremental use over any split, including the 8-byte fast path.
	data := bytes.Repeat([]byte("The quick brown fox jumps over the lazy dog. "), 20)
	whole := crc64Update(0, data)
	for split := range len(data) {
		if got := crc64Update(crc64Update(0, data[:split]), data[split:]); got != whole {
			t.Fatalf("split at %d: %#x, want %#x", split, got, whole)
		}
	}
}

func TestAppendStringEncoding(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0", "c000"},
		{"-1", "c0ff"},
		{"127", "c07f"},
		{"-128", "c080"},
		{"128", "c18000"},
		{"-32768", "c10080"},
		{"32768", "c200800000"},
		{"2147483647", "c2ffffff7f"},
		{"-2147483648", "c200000080"},
		{"2147483648", "0a" + hex.EncodeToString([]byte("2147483648"))},
		{"007", "03303037"},
		{"-0", "022d30"},
		{"+1", "022b31"},
		{" 1", "022031"},
		{"", "00"},
		{"abc", "03616263"},
	} {
		if got := hex.EncodeToString(AppendString(nil, []byte(tc.in))); got != tc.want {
			t.Errorf("AppendString(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := hex.EncodeToString(AppendInt(nil, 5000000000)); got != "0a"+hex.EncodeToString([]byte("5000000000")) {
		t.Errorf("AppendInt(5000000000) = %s", got)
	}
	if got := hex.EncodeToString(AppendInt(nil, -200)); got != "c138ff" {
		t.Errorf("AppendInt(-200) = %s", got)
	}
}

func TestAppendLen(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{
		{0, "00"}, {63, "3f"}, {64, "4040"}, {16383, "7fff"}, {16384, "8000004000"},
		{math.MaxUint32, "80ffffffff"}, {math.MaxUint32 + 1, "810000000100000000"},
		{math.MaxUint64, "81ffffffffffffffff"},
	} {
		b := AppendLen(nil, tc.n)
		if got := hex.EncodeToString(b); got != tc.want {
			t.Errorf("AppendLen(%d) = %s, want %s", tc.n, got, tc.want)
		}
		d := &decoder{r: bytes.NewReader(b), buf: make([]byte, 64)}
		if n, enc, err := d.readLen(); err != nil || enc || n != tc.n {
			t.Errorf("readLen(%s) = %d %v %v", tc.want, n, enc, err)
		}
	}
}

// TestAppendHashEntryAllocs: encoding into a reused buffer allocates nothing.
func TestAppendHashEntryAllocs(t *testing.T) {
	buf := make([]byte, 0, 4096)
	key, f, v := []byte("user:1000"), []byte("name"), []byte("12345")
	allocs := testing.AllocsPerRun(100, func() {
		buf = appendHashEntry(buf[:0], key, f, v)
	})
	if allocs != 0 {
		t.Fatalf("appending a hash entry allocates %v times", allocs)
	}
}

func appendHashEntry(dst, key, f, v []byte) []byte {
	dst = AppendKey(dst, TypeHash, key, 1700000000000)
	dst = AppendLen(dst, 4)
	for range 4 {
		dst = AppendString(dst, f)
		dst = AppendString(dst, v)
	}
	return dst
}

// file builds a minimal RDB file of version ver around body, with a valid
// checksum when ver >= 5.
func file(ver string, body ...[]byte) []byte {
	b := []byte("REDIS" + ver)
	for _, p := range body {
		b = append(b, p...)
	}
	b = append(b, opEOF)
	if ver >= "0005" {
		b = binary.LittleEndian.AppendUint64(b, crc64Update(0, b))
	}
	return b
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestLoadErrors(t *testing.T) {
	str := func(s string) []byte { return AppendString(nil, []byte(s)) }
	key := func(typ byte, k string) []byte { return AppendKey(nil, typ, []byte(k), 0) }
	setDup := cat(key(TypeSet, "s"), AppendLen(nil, 2), str("a"), str("a"))
	badChecksum := file("0010", key(TypeString, "k"), str("v"))
	badChecksum[len(badChecksum)-1] ^= 1
	nan := cat(key(TypeZSet2, "z"), AppendLen(nil, 1), str("m"), AppendBinaryDouble(nil, math.NaN()))
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"bad magic", []byte("RODIS0010\xff"), "rdb: offset 0: wrong signature"},
		{"version 11", file("0011"), "rdb: offset 5: can't handle RDB format version 11"},
		{"version 0", file("0000"), "can't handle RDB format version 0"},
		{"unknown type", file("0010", []byte{42}), "rdb: offset 9: unknown value type 42"},
		{"module type", file("0010", []byte{7}), "rdb: offset 9: module value type 7"},
		{"function pre-GA", file("0010", []byte{opFunctionPreGA}), "rdb: offset 9: Pre-GA function format not supported"},
		{"function2 truncated", cat([]byte("REDIS0010"), []byte{opFunction2}), "unexpected end of file"},
		{"module aux", file("0010", []byte{opModuleAux}), "rdb: offset 9: MODULE_AUX"},
		{"checksum", badChecksum, "wrong RDB checksum"},
		{"truncated", cat([]byte("REDIS0010"), key(TypeString, "k")), "rdb: offset 12: unexpected end of file"},
		{"duplicate set member", file("0010", setDup), `duplicate set members detected: "a"`},
		{"nan score", file("0010", nan), "zset with NAN score detected"},
		{"bad length encoding", file("0010", key(TypeString, "k"), []byte{0x82}), "unknown length encoding 0x82"},
		{"huge count", file("0010", key(TypeList, "l"), AppendLen(nil, 1<<50)), "element count 1125899906842624 is impossible"},
		{"lzf expansion", file("0010", key(TypeString, "k"), []byte{0xC3, 1, 0x80, 0, 0, 0}), "invalid LZF compressed string"},
		{"bad ziplist", file("0010", key(TypeListZiplist, "l"), str("not a ziplist")), "ziplist integrity check failed"},
		{"bad listpack", file("0010", key(TypeHashListpack, "h"), str("not a listpack")), "listpack integrity check failed"},
		{"bad intset", file("0010", key(TypeSetIntset, "s"), str("12345678")), "intset integrity check failed"},
	} {
		_, err := Load(bytes.NewReader(tc.data), func(*Entry) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadAccepts(t *testing.T) {
	str := func(s string) []byte { return AppendString(nil, []byte(s)) }
	key := func(typ byte, k string) []byte { return AppendKey(nil, typ, []byte(k), 0) }
	// Version 4: no checksum after EOF.
	var keys []string
	info, err := Load(bytes.NewReader(file("0004", key(TypeString, "a"), str("1"))), func(e *Entry) error {
		keys = append(keys, string(e.Key)+"="+string(e.Str))
		return nil
	})
	if err != nil || info.Version != 4 || len(keys) != 1 || keys[0] != "a=1" {
		t.Fatalf("version 4: %v %+v %v", err, info, keys)
	}
	// A zero checksum means rdbchecksum no.
	f := file("0010", key(TypeString, "a"), str("1"))
	binary.LittleEndian.PutUint64(f[len(f)-8:], 0)
	if _, err := Load(bytes.NewReader(f), func(*Entry) error { return nil }); err != nil {
		t.Fatalf("zero checksum: %v", err)
	}
	// Empty collections are skipped and counted, as Redis does.
	f = file("0010", key(TypeSet, "empty"), AppendLen(nil, 0), key(TypeString, "b"), str("2"))
	n := 0
	info, err = Load(bytes.NewReader(f), func(*Entry) error { n++; return nil })
	if err != nil || n != 1 || info.EmptyKeysSkipped != 1 {
		t.Fatalf("empty key: %v, %d keys, %+v", err, n, info)
	}
	// An error from the callback stops Load and comes back as is.
	stop := errors.New("stop")
	if _, err := Load(bytes.NewReader(f), func(*Entry) error { return stop }); err != stop {
		t.Fatalf("callback error: %v", err)
	}
}
