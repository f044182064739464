package rdb

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"github.com/svcdb/svcdb/shard/values"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// appendEntry encodes e as a shard does, following the contract: AppendKey,
// then the value in the plain types (TypeString, TypeList, TypeSet,
// TypeHash, TypeZSet2) or TypeStreamListpacks2.
func appendEntry(dst []byte, e *Entry) []byte {
	switch e.Kind {
	case values.KindString:
		dst = AppendKey(dst, TypeString, e.Key, e.ExpireAt)
		return AppendString(dst, e.Str)
	case values.KindList, values.KindSet:
		typ := TypeList
		if e.Kind == values.KindSet {
			typ = TypeSet
		}
		dst = AppendKey(dst, typ, e.Key, e.ExpireAt)
		dst = AppendLen(dst, uint64(len(e.Elems)))
		for _, el := range e.Elems {
			dst = AppendString(dst, el)
		}
		return dst
	case values.KindHash:
		dst = AppendKey(dst, TypeHash, e.Key, e.ExpireAt)
		dst = AppendLen(dst, uint64(len(e.Pairs)/2))
		for _, p := range e.Pairs {
			dst = AppendString(dst, p)
		}
		return dst
	case values.KindZSet:
		dst = AppendKey(dst, TypeZSet2, e.Key, e.ExpireAt)
		dst = AppendLen(dst, uint64(len(e.ZSet)))
		for _, m := range e.ZSet {
			dst = AppendString(dst, m.Member)
			dst = AppendBinaryDouble(dst, m.Score)
		}
		return dst
	case values.KindStream:
		dst = AppendKey(dst, TypeStreamListpacks2, e.Key, e.ExpireAt)
		return AppendStream(dst, e.Stream)
	}
	panic("unknown kind")
}

// writeFile writes entries (grouped by DB, in order) as an RDB file.
func writeFile(t testing.TB, path string, entries []Entry) {
	t.Helper()
	if err := os.WriteFile(path, encodeFile(t, entries), 0o644); err != nil {
		t.Fatal(err)
	}
}

// encodeFile encodes entries (grouped by DB, in order) as an RDB file
// with the AUX fields Redis writes.
func encodeFile(t testing.TB, entries []Entry) []byte {
	t.Helper()
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	w := NewWriter(bw)
	if err := w.Header([2]string{"redis-ver", "7.0.15"}, [2]string{"redis-bits", "64"},
		[2]string{"ctime", strconv.FormatInt(time.Now().Unix(), 10)}, [2]string{"used-mem", "1000000"},
		[2]string{"aof-base", "0"}); err != nil {
		t.Fatal(err)
	}
	byDB := map[int][]*Entry{}
	var dbs []int
	for i := range entries {
		e := &entries[i]
		if byDB[e.DB] == nil {
			dbs = append(dbs, e.DB)
		}
		byDB[e.DB] = append(byDB[e.DB], e)
	}
	var buf []byte
	for _, db := range dbs {
		var expires uint64
		for _, e := range byDB[db] {
			if e.ExpireAt != 0 {
				expires++
			}
		}
		if err := w.SelectDB(db, uint64(len(byDB[db])), expires); err != nil {
			t.Fatal(err)
		}
		for _, e := range byDB[db] {
			buf = appendEntry(buf[:0], e)
			if _, err := w.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if int64(out.Len()) != w.Written() {
		t.Fatalf("Written() = %d, wrote %d", w.Written(), out.Len())
	}
	return out.Bytes()
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// fixtureStream is a stream exercising node splits by count and by bytes,
// entries with and without the master fields, integer-looking fields and
// values, and groups with PELs (one entry pending although deleted) and
// consumers with and without pending entries.
func fixtureStream(now int64) *Stream {
	s := &Stream{}
	base := uint64(1700000000000)
	for i := 0; i < 250; i++ {
		id := StreamID{Ms: base + uint64(i/3), Seq: uint64(i % 3)}
		var fields [][]byte
		switch {
		case i%17 == 5:
			fields = bs("other", "x", "n", strconv.Itoa(-i*1000))
		case i == 120:
			fields = bs("field", string(bytes.Repeat([]byte("L"), 5000)), "n", "1")
		case i%29 == 3:
			fields = bs("field", "v"+strconv.Itoa(i), "n", strconv.Itoa(i), "extra", "")
		default:
			fields = bs("field", "v"+strconv.Itoa(i), "n", strconv.Itoa(i*1000003))
		}
		if i == 7 { // skip one ID: a deleted entry
			continue
		}
		s.Entries = append(s.Entries, StreamEntry{ID: id, Fields: fields})
	}
	s.Length = uint64(len(s.Entries))
	s.FirstID = s.Entries[0].ID
	s.LastID = StreamID{Ms: base + 200, Seq: 5}
	s.MaxDeletedID = StreamID{Ms: base + 2, Seq: 1}
	s.EntriesAdded = s.Length + 3
	e := s.Entries
	s.Groups = []StreamGroup{
		{Name: []byte("g1"), LastID: e[20].ID, EntriesRead: 21,
			PEL: []StreamPending{
				{ID: e[1].ID, DeliveryTime: now - 5000, DeliveryCount: 1, Consumer: []byte("alice")},
				{ID: StreamID{Ms: base + 2, Seq: 1}, DeliveryTime: now - 4000, DeliveryCount: 3, Consumer: []byte("bob")},
				{ID: e[10].ID, DeliveryTime: now - 3000, DeliveryCount: 2, Consumer: []byte("alice")},
				{ID: e[20].ID, DeliveryTime: now - 2000, DeliveryCount: 1, Consumer: []byte("bob")},
			},
			Consumers: []StreamConsumer{
				{Name: []byte("alice"), SeenTime: now - 1000},
				{Name: []byte("bob"), SeenTime: now - 900},
				{Name: []byte("carol"), SeenTime: now - 800},
			}},
		{Name: []byte("g2"), LastID: StreamID{}, EntriesRead: -1},
		{Name: []byte("12345"), LastID: s.LastID, EntriesRead: int64(s.EntriesAdded),
			Consumers: []StreamConsumer{{Name: []byte("7"), SeenTime: now}}},
	}
	return s
}

// fixture is every type in several shapes, in two databases.
func fixture() []Entry {
	now := time.Now().UnixMilli()
	ttl := now + 3600_000
	var big [][]byte
	for i := 0; i < 1000; i++ {
		big = append(big, []byte(fmt.Sprintf("element-%d-%s", i, bytes.Repeat([]byte("x"), i%50))))
	}
	var bigHash [][]byte
	for i := 0; i < 600; i++ {
		bigHash = append(bigHash, []byte("f"+strconv.Itoa(i)), []byte(strconv.Itoa(i*i)))
	}
	var bigSet [][]byte
	for i := 0; i < 700; i++ {
		bigSet = append(bigSet, []byte(strconv.Itoa(i*7-300)))
	}
	var bigZ []ZMember
	for i := 0; i < 300; i++ {
		bigZ = append(bigZ, ZMember{Member: []byte("m" + strconv.Itoa(i)), Score: float64(i) / 3})
	}
	// -0 only in a zset Redis keeps as a skiplist: in a listpack Redis
	// 7.0 itself turns -0 into 0.
	bigZ = append(bigZ, ZMember{[]byte("negzero"), math.Copysign(0, -1)},
		ZMember{[]byte("inf"), math.Inf(1)}, ZMember{[]byte("-inf"), math.Inf(-1)})
	return []Entry{
		{Key: []byte("int"), Kind: values.KindString, Str: []byte("12345")},
		{Key: []byte("int-neg"), Kind: values.KindString, Str: []byte("-2147483648")},
		{Key: []byte("int-big"), Kind: values.KindString, Str: []byte("2147483648")},
		{Key: []byte("int-max"), Kind: values.KindString, Str: []byte("9223372036854775807")},
		{Key: []byte("leading-zero"), Kind: values.KindString, Str: []byte("007")},
		{Key: []byte("minus-zero"), Kind: values.KindString, Str: []byte("-0")},
		{Key: []byte("empty"), Kind: values.KindString, Str: []byte{}},
		{Key: []byte("binary"), Kind: values.KindString, Str: []byte("\x00\xff\r\n\x01")},
		{Key: []byte("long"), Kind: values.KindString, Str: bytes.Repeat([]byte("0123456789"), 2000)},
		{Key: []byte("42"), Kind: values.KindString, Str: []byte("int-looking key")},
		{Key: []byte("ttl-string"), Kind: values.KindString, Str: []byte("v"), ExpireAt: ttl},
		{Key: []byte("list"), Kind: values.KindList, Elems: bs("a", "1", "-5", "", "b")},
		{Key: []byte("list-big"), Kind: values.KindList, Elems: big},
		{Key: []byte("set"), Kind: values.KindSet, Elems: bs("x", "y", "1")},
		{Key: []byte("set-ints"), Kind: values.KindSet, Elems: bigSet},
		{Key: []byte("hash"), Kind: values.KindHash, Pairs: bs("a", "1", "b", "two", "", "empty-field")},
		{Key: []byte("hash-big"), Kind: values.KindHash, Pairs: bigHash, ExpireAt: ttl + 1},
		{Key: []byte("zset"), Kind: values.KindZSet, ZSet: []ZMember{
			{[]byte("one"), 1}, {[]byte("zero"), 0}, {[]byte("inf"), math.Inf(1)},
			{[]byte("-inf"), math.Inf(-1)}, {[]byte("half"), 1.5}, {[]byte("huge"), 1e300},
			{[]byte("tiny"), -1e-300}, {[]byte("tenth"), 0.1}}},
		{Key: []byte("zset-big"), Kind: values.KindZSet, ZSet: bigZ},
		{Key: []byte("stream"), Kind: values.KindStream, Stream: fixtureStream(now)},
		{Key: []byte("stream-empty"), Kind: values.KindStream, Stream: &Stream{
			LastID: StreamID{5, 0}, FirstID: StreamID{0, 0}, EntriesAdded: 1,
			Groups: []StreamGroup{{Name: []byte("g"), LastID: StreamID{5, 0}, EntriesRead: 1}}}},
		{DB: 3, Key: []byte("db3-string"), Kind: values.KindString, Str: []byte("in db 3")},
		{DB: 3, Key: []byte("db3-list"), Kind: values.KindList, Elems: bs("q"), ExpireAt: ttl + 2},
	}
}

func describeEntries(entries []Entry) dataset {
	ds := dataset{}
	for i := range entries {
		e := &entries[i]
		if ds[e.DB] == nil {
			ds[e.DB] = map[string]*keyDesc{}
		}
		ds[e.DB][string(e.Key)] = describeEntry(e)
	}
	return ds.escaped()
}

// TestRoundTripThroughRedis writes the fixture with our encoder, checks it
// with redis-check-rdb, loads it into a real redis-server and reads it back
// with go-redis, then has that server SAVE and loads its file with Load.
func TestRoundTripThroughRedis(t *testing.T) {
	entries := fixture()
	want := describeEntries(entries)
	dir := t.TempDir()
	path := filepath.Join(dir, "ours.rdb")
	writeFile(t, path, entries)
	checkRDB(t, path)

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := loadDataset(t, data)
	requireSame(t, "our file through Load", want, got)

	srv := startRedis(t, dir, "ours.rdb")
	requireSame(t, "our file through redis-server", want, describeServer(t, srv, 0, 3))

	saved := srv.save("theirs.rdb")
	data, err = os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	got, info := loadDataset(t, data)
	if info.Version != 10 || info.Aux["redis-ver"] == "" {
		t.Errorf("info = %+v, want version 10 and redis-ver", info)
	}
	requireSame(t, "redis-server's SAVE through Load", want, got)
}

// TestStreamLayoutMatchesRedis: a stream built with XADD (no deletions) in
// a server that does not compress, saved, must contain exactly the bytes
// AppendKey+AppendStream produce for the same entries: the same node
// splits, master entries, flags, deltas and lp-counts.
func TestStreamLayoutMatchesRedis(t *testing.T) {
	dir := t.TempDir()
	srv := startRedis(t, dir, "dump.rdb", "--rdbcompression", "no")
	ctx := context.Background()
	c := srv.client(0)
	s := fixtureStream(0)
	s.Groups = nil
	for _, e := range s.Entries {
		args := []any{"XADD", "s", idString(e.ID)}
		for _, f := range e.Fields {
			args = append(args, string(f))
		}
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatal(err)
		}
	}
	last := s.Entries[len(s.Entries)-1].ID
	s.LastID, s.MaxDeletedID, s.EntriesAdded = last, StreamID{}, s.Length
	data, err := os.ReadFile(srv.save("dump.rdb"))
	if err != nil {
		t.Fatal(err)
	}
	ours := AppendStream(AppendKey(nil, TypeStreamListpacks2, []byte("s"), 0), s)
	if !bytes.Contains(data, ours) {
		at := bytes.Index(data, []byte{TypeStreamListpacks2, 1, 's'})
		t.Fatalf("Redis' file does not contain our %d-byte stream encoding; theirs starts at %d:\n ours %x\ntheirs %x",
			len(ours), at, ours[:min(200, len(ours))], data[at:min(at+200, len(data))])
	}
}
