package rdb

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// This file builds, by hand from Redis' format descriptions (ziplist.c,
// zipmap.c, intset.c, listpack.c, t_stream.c, rdb.c), an RDB version 9 file
// in the encodings Redis versions before 7.0 wrote. regenerateOld checks it
// with redis-check-rdb and a real redis-server 7.0, whose view of it
// becomes testdata/old-v9.json.

// zlEntry is one ziplist entry to encode: a string, or an integer when the
// string is a canonical integer (as zipTryEncoding).
func appendZiplist(dst []byte, elems ...string) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, zlHeaderSize)...)
	prev, last := 0, zlHeaderSize
	for _, s := range elems {
		at := len(dst)
		if prev < zlBigPrevLen {
			dst = append(dst, byte(prev))
		} else {
			dst = append(dst, zlBigPrevLen)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(prev))
		}
		if v, ok := parseCanonicalInt([]byte(s)); ok && len(s) <= 31 {
			switch {
			case v >= 0 && v <= 12:
				dst = append(dst, byte(0xF1+v))
			case v >= math.MinInt8 && v <= math.MaxInt8:
				dst = append(dst, 0xFE, byte(v))
			case v >= math.MinInt16 && v <= math.MaxInt16:
				dst = append(dst, 0xC0)
				dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
			case v >= -1<<23 && v < 1<<23:
				dst = append(dst, 0xF0, byte(v), byte(v>>8), byte(v>>16))
			case v >= math.MinInt32 && v <= math.MaxInt32:
				dst = append(dst, 0xD0)
				dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
			default:
				dst = append(dst, 0xE0)
				dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
			}
		} else {
			switch n := len(s); {
			case n < 64:
				dst = append(dst, byte(n))
			case n < 16384:
				dst = append(dst, 0x40|byte(n>>8), byte(n))
			default:
				dst = append(dst, 0x80)
				dst = binary.BigEndian.AppendUint32(dst, uint32(n))
			}
			dst = append(dst, s...)
		}
		prev, last = len(dst)-at, at-start
	}
	dst = append(dst, zlEnd)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	binary.LittleEndian.PutUint32(dst[start+4:], uint32(last))
	binary.LittleEndian.PutUint16(dst[start+8:], uint16(len(elems)))
	return dst
}

// appendZipmap encodes field/value pairs as a zipmap, giving every value
// two bytes of free space as an updated zipmap would have.
func appendZipmap(dst []byte, pairs ...string) []byte {
	dst = append(dst, byte(len(pairs)/2))
	zmLen := func(dst []byte, n int) []byte {
		if n < 254 {
			return append(dst, byte(n))
		}
		dst = append(dst, 254)
		return binary.LittleEndian.AppendUint32(dst, uint32(n))
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		dst = zmLen(dst, len(pairs[i]))
		dst = append(dst, pairs[i]...)
		dst = zmLen(dst, len(pairs[i+1]))
		dst = append(dst, 2)
		dst = append(dst, pairs[i+1]...)
		dst = append(dst, 0, 0)
	}
	return append(dst, 0xFF)
}

func appendIntset(dst []byte, width int, vals ...int64) []byte {
	slices.Sort(vals)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(width))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(vals)))
	for _, v := range vals {
		switch width {
		case 2:
			dst = binary.LittleEndian.AppendUint16(dst, uint16(v))
		case 4:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(v))
		default:
			dst = binary.LittleEndian.AppendUint64(dst, uint64(v))
		}
	}
	return dst
}

func appendBlob(dst, blob []byte) []byte {
	dst = AppendLen(dst, uint64(len(blob)))
	return append(dst, blob...)
}

func appendStringDouble(dst []byte, s string) []byte {
	switch s {
	case "inf":
		return append(dst, 254)
	case "-inf":
		return append(dst, 255)
	}
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

// oldStreamNode builds a stream node by hand with deleted entries: master
// fields (a, b); entries 100-0 (live, same fields), 100-1 (deleted, same
// fields), 101-0 (live, own fields), 102-5 (deleted, own fields).
func oldStreamNode() []byte {
	s := func(dst []byte, v string) []byte { return lpAppendString(dst, []byte(v)) }
	i := lpAppendInt
	lp, start := lpStart(nil)
	lp = i(lp, 2) // live
	lp = i(lp, 2) // deleted
	lp = i(lp, 2) // master fields
	lp = s(lp, "a")
	lp = s(lp, "b")
	lp = i(lp, 0)
	elems := 6
	// 100-0 live, same fields.
	lp = i(i(i(lp, streamItemFlagSameFields), 0), 0)
	lp = i(s(s(lp, "1"), "two"), 5)
	// 100-1 deleted, same fields.
	lp = i(i(i(lp, streamItemFlagSameFields|streamItemFlagDeleted), 0), 1)
	lp = i(s(s(lp, "gone"), "gone"), 5)
	// 101-0 live, own fields.
	lp = i(i(i(lp, streamItemFlagNone), 1), 0)
	lp = i(lp, 1)
	lp = i(s(s(lp, "c"), "-300"), 6)
	// 102-5 deleted, own fields.
	lp = i(i(i(lp, streamItemFlagDeleted), 2), 5)
	lp = i(lp, 1)
	lp = i(s(s(lp, "d"), "x"), 6)
	elems += 6 + 6 + 7 + 7
	return lpFinish(lp, start, elems)
}

// buildOldFile returns the bytes of the hand-built RDB 9 file.
func buildOldFile() []byte {
	b := []byte("REDIS0009")
	aux := func(k, v string) {
		b = append(b, opAux)
		b = AppendString(b, []byte(k))
		b = AppendString(b, []byte(v))
	}
	aux("redis-ver", "5.0.7")
	aux("redis-bits", "64")
	aux("ctime", "1600000000")
	b = append(b, opSelectDB, 0, opResizeDB)
	b = AppendLen(b, 14)
	b = AppendLen(b, 1)

	key := func(typ byte, k string) {
		b = append(b, typ)
		b = AppendString(b, []byte(k))
	}
	// A string with an EXPIRETIME (seconds) and IDLE/FREQ opcodes before it.
	b = append(b, opExpireTime)
	b = binary.LittleEndian.AppendUint32(b, 2000000000)
	b = append(b, opIdle, 5, opFreq, 3)
	key(TypeString, "old:ttl")
	b = AppendString(b, []byte("seconds"))
	// An LZF-compressed string written by hand: literal "a", then a
	// back-reference of 29 bytes at distance 1.
	key(TypeString, "old:lzf")
	b = append(b, lenEnc<<6|encLZF, 5, 30, 0x00, 'a', 0xE0, 20, 0x00)
	key(TypeHashZipmap, "old:zipmap")
	b = appendBlob(b, appendZipmap(nil, "name", "zipmap", "n", "12", "empty", ""))
	key(TypeListZiplist, "old:ziplist")
	b = appendBlob(b, appendZiplist(nil, "a", "0", "12", "13", "-100", "30000", "-8000000", "2000000000",
		"-9000000000000000000", "007", strings.Repeat("s", 70), strings.Repeat("t", 300)))
	key(TypeSetIntset, "old:intset16")
	b = appendBlob(b, appendIntset(nil, 2, 3, -1, 7))
	key(TypeSetIntset, "old:intset32")
	b = appendBlob(b, appendIntset(nil, 4, 70000, -70000))
	key(TypeSetIntset, "old:intset64")
	b = appendBlob(b, appendIntset(nil, 8, 1<<40, -(1<<40), 0))
	key(TypeZSetZiplist, "old:zsetziplist")
	b = appendBlob(b, appendZiplist(nil, "a", "1", "b", "2.5", "c", "-inf", "d", "inf", "e", "-3"))
	key(TypeHashZiplist, "old:hashziplist")
	b = appendBlob(b, appendZiplist(nil, "f", "v", "num", "42", "big", "123456789012"))
	key(TypeListQuicklist, "old:quicklist")
	b = AppendLen(b, 3)
	b = appendBlob(b, appendZiplist(nil, "q1", "q2"))
	b = appendBlob(b, appendZiplist(nil)) // an empty node: Redis skips it
	b = appendBlob(b, appendZiplist(nil, "q3", "4"))
	key(TypeZSet, "old:zset")
	b = AppendLen(b, 4)
	for _, p := range [][2]string{{"x", "1.5"}, {"y", "inf"}, {"z", "-inf"}, {"w", "-2"}} {
		b = AppendString(b, []byte(p[0]))
		b = appendStringDouble(b, p[1])
	}
	key(TypeHash, "old:hash")
	b = AppendLen(b, 2)
	for _, s := range []string{"k1", "v1", "k2", "2"} {
		b = AppendString(b, []byte(s))
	}
	key(TypeSet, "old:set")
	b = AppendLen(b, 2)
	b = AppendString(b, []byte("m1"))
	b = AppendString(b, []byte("m2"))

	// A version 1 stream: one node with deleted entries, a group whose
	// entries-read Redis estimates, with a PEL and two consumers.
	key(TypeStreamListpacks, "old:stream")
	b = AppendLen(b, 1)
	b = AppendString(b, appendRawID(nil, StreamID{100, 0}))
	b = appendBlob(b, oldStreamNode())
	b = AppendLen(b, 2)                  // length
	b = appendLenID(b, StreamID{102, 5}) // last ID
	b = AppendLen(b, 2)                  // groups
	b = AppendString(b, []byte("grp"))   // group name
	b = appendLenID(b, StreamID{101, 0}) // last delivered
	b = AppendLen(b, 2)                  // PEL
	b = appendMillis(appendRawID(b, StreamID{100, 0}), 1600000000123)
	b = AppendLen(b, 1)
	b = appendMillis(appendRawID(b, StreamID{101, 0}), 1600000000456)
	b = AppendLen(b, 4)
	b = AppendLen(b, 2) // consumers
	b = appendMillis(AppendString(b, []byte("c1")), 1600000000999)
	b = appendRawID(AppendLen(b, 1), StreamID{100, 0})
	b = appendMillis(AppendString(b, []byte("c2")), 1600000001000)
	b = appendRawID(AppendLen(b, 1), StreamID{101, 0})
	b = AppendString(b, []byte("fresh"))
	b = appendLenID(b, StreamID{0, 0})
	b = AppendLen(b, 0)
	b = AppendLen(b, 0)

	b = append(b, opSelectDB, 2)
	key(TypeListZiplist, "db2:ziplist")
	b = appendBlob(b, appendZiplist(nil, "only"))

	b = append(b, opEOF)
	return binary.LittleEndian.AppendUint64(b, crc64Update(0, b))
}

// regenerateOld writes testdata/old-v9.rdb and records how a real
// redis-server 7.0 sees it.
func regenerateOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "old.rdb")
	if err := os.WriteFile(path, buildOldFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	checkRDB(t, path)
	srv := startRedis(t, dir, "old.rdb")
	want := describeServer(t, srv, 0, 2)
	if want.keyCount() != 15 {
		t.Fatalf("redis-server loaded %d keys from the old file, want 15", want.keyCount())
	}
	writeGolden(t, "old-v9", path, want)
}

// TestOldFileIsStable keeps the checked-in old-v9.rdb what buildOldFile
// makes, so that the builder and the file cannot drift apart silently.
func TestOldFileIsStable(t *testing.T) {
	got, err := os.ReadFile(filepath.Join("testdata", "old-v9.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buildOldFile()) {
		t.Fatal("testdata/old-v9.rdb differs from buildOldFile(): run go test ./shard/rdb -run TestGolden -regenerate")
	}
}
