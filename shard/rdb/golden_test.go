package rdb

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var regenerate = flag.Bool("regenerate", false, "rewrite testdata/*.rdb and *.json from a real redis-server 7.0")

// goldenFiles are RDB files in testdata, each with the description of its
// contents (NAME.json) as a real redis-server 7.0 reported them after
// loading the file.
var goldenFiles = []string{
	"redis-7.0", // written by redis-server 7.0's SAVE (RDB 10, every type in every encoding)
	"old-v9",    // hand-built from Redis' format descriptions (RDB 9, the pre-7.0 encodings)
}

// goldenTypes are the RDB value types each golden file must cover.
var goldenTypes = map[string][]byte{
	"redis-7.0": {TypeString, TypeSet, TypeZSet2, TypeHash, TypeSetIntset, TypeHashListpack,
		TypeZSetListpack, TypeListQuicklist2, TypeStreamListpacks2},
	"old-v9": {TypeString, TypeSet, TypeZSet, TypeHash, TypeHashZipmap, TypeListZiplist, TypeSetIntset,
		TypeZSetZiplist, TypeHashZiplist, TypeListQuicklist, TypeStreamListpacks},
}

// TestGolden loads each golden file with Load and compares it with what
// redis-server reported for it. With -regenerate it first rebuilds them:
// go test ./shard/rdb -run TestGolden -regenerate
func TestGolden(t *testing.T) {
	if *regenerate {
		regenerateRedis70(t)
		regenerateOld(t)
		regenerateSeeds(t)
	}
	for _, name := range goldenFiles {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", name+".rdb"))
			if err != nil {
				t.Fatal(err)
			}
			checkRDB(t, filepath.Join("testdata", name+".rdb"))
			raw, err := os.ReadFile(filepath.Join("testdata", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var want dataset
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			got, info := loadDataset(t, data)
			requireSame(t, name, want, got)
			types := map[byte]bool{}
			if _, err := Load(bytes.NewReader(data), func(e *Entry) error { types[e.Type] = true; return nil }); err != nil {
				t.Fatal(err)
			}
			for _, typ := range goldenTypes[name] {
				if !types[typ] {
					t.Errorf("%s holds no key of RDB type %d; it has %v", name, typ, types)
				}
			}
			t.Logf("%s: RDB %d, %d keys, aux %v", name, info.Version, got.keyCount(), info.Aux)
		})
	}
}

func writeGolden(t *testing.T, name string, rdbPath string, ds dataset) {
	t.Helper()
	data, err := os.ReadFile(rdbPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".rdb"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(ds, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".json"), append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote testdata/%s.rdb (%d bytes, %d keys)", name, len(data), ds.keyCount())
}

// regenerateRedis70 fills a real redis-server 7.0 with every type in every
// encoding, saves it, and records what it holds.
func regenerateRedis70(t *testing.T) {
	dir := t.TempDir()
	// allkeys-lfu makes Redis write a FREQ opcode before each key.
	srv := startRedis(t, dir, "dump.rdb", "--maxmemory-policy", "allkeys-lfu")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 0))
	run := func(db int, args ...any) {
		t.Helper()
		if err := srv.client(db).Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	const year2100 = 4102444800000
	noise := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(33 + rng.IntN(94))
		}
		return string(b)
	}

	// Strings: int, embstr, raw (incompressible), LZF-compressible, binary.
	run(0, "SET", "str:int", "12345")
	run(0, "SET", "str:neg", "-7")
	run(0, "SET", "str:int32max", "2147483647")
	run(0, "SET", "str:int64max", "9223372036854775807")
	run(0, "SET", "str:leading-zero", "0012")
	run(0, "SET", "str:embstr", "hello")
	run(0, "SET", "str:raw", noise(60))
	run(0, "SET", "str:lzf", strings.Repeat("compress me ", 300))
	run(0, "SET", "str:bin", "\x00\x01\xff\r\n")
	run(0, "SET", "str:empty", "")
	run(0, "SET", "str:float", "3.14")
	run(0, "SET", "1234", "an integer-looking key")
	run(0, "SET", "str:ttl", "expires in 2100")
	run(0, "PEXPIREAT", "str:ttl", year2100)

	// Lists: one listpack node, many nodes, plain nodes.
	run(0, "RPUSH", "list:small", "a", "b", "1", "-2", "3000000000", "", "-9223372036854775808")
	big := []any{"RPUSH", "list:big"}
	for i := 0; i < 3000; i++ {
		big = append(big, fmt.Sprintf("item-%d-%s", i, strings.Repeat("z", i%40)))
	}
	run(0, big...)
	run(0, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100")
	run(0, "RPUSH", "list:plain", "small", strings.Repeat("P", 300), "small2", noise(500))
	run(0, "DEBUG", "QUICKLIST-PACKED-THRESHOLD", "1073741824")

	// Sets: intset (16-, 32- and 64-bit), hashtable.
	run(0, "SADD", "set:intset16", "1", "2", "3", "-5")
	run(0, "SADD", "set:intset32", "1", "100000", "-100000")
	run(0, "SADD", "set:intset64", "1", "5000000000", "-5000000000")
	run(0, "SADD", "set:ht", "a", "b", "c", "1")
	bigSet := []any{"SADD", "set:big"}
	for i := 0; i < 1000; i++ {
		bigSet = append(bigSet, "member-"+strconv.Itoa(i))
	}
	run(0, bigSet...)
	bigInts := []any{"SADD", "set:bigints"}
	for i := 0; i < 600; i++ { // more than set-max-intset-entries: hashtable of integers
		bigInts = append(bigInts, strconv.Itoa(i*3))
	}
	run(0, bigInts...)

	// Sorted sets: listpack and skiplist, with inf, -inf, -0.
	run(0, "ZADD", "zset:lp", "1", "a", "2.5", "b", "inf", "c", "-inf", "d", "-0", "e", "0.1", "f", "-3", "g", "1e300", "h")
	sl := []any{"ZADD", "zset:sl"}
	for i := 0; i < 200; i++ {
		sl = append(sl, strconv.FormatFloat(float64(i)/7, 'g', -1, 64), "m"+strconv.Itoa(i))
	}
	sl = append(sl, "inf", "pinf", "-inf", "ninf", "-0", "negzero")
	run(0, sl...)
	run(0, "ZADD", "zset:longmember", "1", strings.Repeat("M", 100)) // over zset-max-listpack-value

	// Hashes: listpack and hashtable.
	run(0, "HSET", "hash:lp", "f1", "v1", "f2", "2", "f3", "", "", "empty-field", "n", "-1234567")
	bh := []any{"HSET", "hash:ht"}
	for i := 0; i < 200; i++ {
		bh = append(bh, "field-"+strconv.Itoa(i), strconv.Itoa(i*i))
	}
	run(0, bh...)
	run(0, "HSET", "hash:longval", "f", strings.Repeat("V", 100))
	run(0, "HSET", "hash:ttl", "a", "b")
	run(0, "PEXPIREAT", "hash:ttl", year2100+1)

	// Streams: entries over several nodes with deleted ones, groups with
	// PELs, consumers with and without pending entries, a pending entry
	// whose entry was deleted.
	for i := 0; i < 300; i++ {
		id := fmt.Sprintf("%d-%d", 1000+i/4, i%4)
		switch {
		case i%11 == 0:
			run(0, "XADD", "stream", id, "other", "x", "n", strconv.Itoa(-i))
		case i == 150:
			run(0, "XADD", "stream", id, "field", strings.Repeat("B", 3000), "n", "0")
		default:
			run(0, "XADD", "stream", id, "field", "v"+strconv.Itoa(i), "n", strconv.Itoa(i*7919))
		}
	}
	run(0, "XDEL", "stream", "1001-1", "1002-2", "1050-0", "1074-3")
	run(0, "XGROUP", "CREATE", "stream", "g1", "0")
	run(0, "XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", "stream", ">")
	run(0, "XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", "stream", ">")
	run(0, "XACK", "stream", "g1", "1000-1")
	run(0, "XGROUP", "CREATECONSUMER", "stream", "g1", "carol")
	run(0, "XCLAIM", "stream", "g1", "carol", "0", "1001-3")
	run(0, "XDEL", "stream", "1000-2") // pending in g1, now deleted
	run(0, "XGROUP", "CREATE", "stream", "g2", "$")
	run(0, "XGROUP", "CREATE", "stream", "g3", "1010-0", "ENTRIESREAD", "35")
	run(0, "XGROUP", "CREATE", "stream:empty", "g", "$", "MKSTREAM")
	run(0, "XADD", "stream:alldeleted", "1-1", "a", "b")
	run(0, "XADD", "stream:alldeleted", "2-1", "a", "c")
	run(0, "XDEL", "stream:alldeleted", "1-1", "2-1")
	for i := 0; i < 500; i++ {
		run(0, "XADD", "stream:trimmed", "*", "k", strconv.Itoa(i))
	}
	run(0, "XTRIM", "stream:trimmed", "MAXLEN", "50")

	// Other databases.
	run(1, "SET", "db1:key", "value in db 1")
	run(1, "LPUSH", "db1:list", "x")
	run(5, "HSET", "db5:hash", "a", "b")
	run(5, "SADD", "db5:set", "1")
	run(5, "PEXPIREAT", "db5:set", year2100+2)

	want := describeServer(t, srv, 0, 1, 5)
	path := srv.save("dump.rdb")
	writeGolden(t, "redis-7.0", path, want)
}
