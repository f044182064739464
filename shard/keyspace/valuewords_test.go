package keyspace

import (
	"math"
	"strconv"
	"testing"

	"github.com/svcdb/svcdb/shard/values"
)

// TestValueWordsAccessors: each accessor gives back what its setter stored,
// the others read as empty, and a nil setter clears only its own kind (what
// lets code written for separate fields clear both).
func TestValueWordsAccessors(t *testing.T) {
	var o Object
	for _, v := range []int64{0, 1, -1, 12345, math.MaxInt64, math.MinInt64, 1 << 32, -1 << 32} {
		o.SetInt(v)
		if o.Int() != v || o.Bytes() != nil || o.Coll() != nil {
			t.Fatalf("SetInt(%d): Int %d, Bytes %v, Coll %v", v, o.Int(), o.Bytes(), o.Coll())
		}
	}
	buf := make([]byte, 3, 10)
	copy(buf, "abc")
	o.SetBytes(buf)
	if b := o.Bytes(); string(b) != "abc" || cap(b) != 10 || &b[0] != &buf[0] || o.Int() != 0 || o.Coll() != nil {
		t.Fatalf("SetBytes: %q cap %d, Int %d, Coll %v", b, cap(b), o.Int(), o.Coll())
	}
	o.SetColl(nil) // not a collection: the bytes stay
	if string(o.Bytes()) != "abc" {
		t.Fatalf("SetColl(nil) dropped the bytes")
	}
	o.SetBytes([]byte{}) // empty but not nil, as a SET k "" leaves it
	if b := o.Bytes(); b == nil || len(b) != 0 {
		t.Fatalf("empty bytes read back as %v (nil %v)", b, b == nil)
	}
	o.SetBytes(nil)
	if o.Bytes() != nil || o.words != wordsNone {
		t.Fatalf("SetBytes(nil) left %v, words %d", o.Bytes(), o.words)
	}
	for _, c := range []values.Collection{values.NewHTable(true, 4), values.NewSkiplist(0), values.NewQuicklist(0), values.NewStream()} {
		o.SetColl(c)
		if o.Coll() != c || o.Bytes() != nil || o.Int() != 0 {
			t.Fatalf("SetColl(%T): Coll %v, Bytes %v, Int %d", c, o.Coll(), o.Bytes(), o.Int())
		}
		o.SetBytes(nil) // not bytes: the collection stays
		if o.Coll() != c {
			t.Fatalf("SetBytes(nil) dropped the %T", c)
		}
	}
	o.SetColl(nil)
	if o.Coll() != nil || o.words != wordsNone {
		t.Fatalf("SetColl(nil) left %v, words %d", o.Coll(), o.words)
	}
}

// TestValueWordsEveryEncoding builds a value of every encoding through the
// keyspace's value functions (compact, then converted) and checks that the
// words agree with Enc (verifyWords), then that removing the keys leaves
// empty slots with no words.
func TestValueWordsEveryEncoding(t *testing.T) {
	lim := DefaultEncodingLimits
	d := newDB()
	mk := func(key string, kind Kind) *Object { return d.Insert([]byte(key), kind) }
	many := func(prefix string, n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte(prefix + strconv.Itoa(i))
		}
		return out
	}

	d.SetString(mk("raw", KindString), []byte("value"))
	d.SetInt(mk("int", KindString), -1<<40)
	mk("nobytes", KindString)

	for _, tc := range []struct {
		key     string
		members [][]byte
		want    Encoding
	}{{"intset", many("", 3), EncIntset}, {"lpset", many("m", 3), EncListpack}, {"htset", many("m", 600), EncHashtable}} {
		o := mk(tc.key, KindSet)
		NewSetValue(o, tc.members, &lim)
		for _, m := range tc.members {
			SetAdd(o, m, &lim)
		}
		if o.Enc != tc.want {
			t.Fatalf("%s: encoding %d, want %d", tc.key, o.Enc, tc.want)
		}
	}
	for _, tc := range []struct {
		key  string
		n    int
		want Encoding
	}{{"lphash", 3, EncListpack}, {"hthash", 600, EncHashtable}} {
		o := mk(tc.key, KindHash)
		pairs := many("f", 2*tc.n)
		NewHashValue(o, pairs, &lim)
		for i := 0; i < len(pairs); i += 2 {
			HashSet(o, pairs[i], pairs[i+1], &lim)
		}
		if o.Enc != tc.want {
			t.Fatalf("%s: encoding %d, want %d", tc.key, o.Enc, tc.want)
		}
	}
	for _, tc := range []struct {
		key  string
		n    int
		want Encoding
	}{{"lpzset", 3, EncListpack}, {"slzset", 600, EncSkiplist}} {
		o := mk(tc.key, KindZSet)
		NewZSetValue(o, [][]byte{[]byte("0"), []byte("z0")}, &lim)
		for i, m := range many("z", tc.n) {
			ZSetAdd(o, float64(i), m, 0, &lim)
		}
		if o.Enc != tc.want {
			t.Fatalf("%s: encoding %d, want %d", tc.key, o.Enc, tc.want)
		}
	}
	for _, tc := range []struct {
		key  string
		n    int
		want Encoding
	}{{"lplist", 3, EncListpack}, {"qllist", 3000, EncQuicklist}} {
		o := mk(tc.key, KindList)
		o.Enc = EncListpack // as LPUSH makes a new list
		ListPushMany(o, many("e", tc.n), false, &lim)
		if o.Enc != tc.want {
			t.Fatalf("%s: encoding %d, want %d", tc.key, o.Enc, tc.want)
		}
	}
	st := mk("stream", KindStream)
	st.Enc = EncStream
	st.SetColl(values.NewStream())

	if err := d.VerifyValueWords(); err != nil {
		t.Fatal(err)
	}
	st.Enc = EncSkiplist // a stream's words under a sorted set's encoding
	if err := d.VerifyValueWords(); err == nil {
		t.Fatal("VerifyValueWords accepted a stream's words under EncSkiplist")
	}
	st.Enc = EncStream
	for _, key := range []string{"raw", "int", "intset", "htset", "lphash", "slzset", "qllist", "stream"} {
		o, _ := d.findString(key)
		d.Remove(o)
	}
	if err := d.VerifyValueWords(); err != nil {
		t.Fatal(err)
	}
}

// TestValueLenLimit: the value words hold a capacity below 4 GiB and refuse
// (panic, an error reply through the runtime) anything larger rather than
// truncate it.
func TestValueLenLimit(t *testing.T) {
	panics := func(c int) (p bool) {
		defer func() { p = recover() != nil }()
		checkValueLen(c)
		return false
	}
	if panics(math.MaxUint32) || !panics(math.MaxUint32+1) || !panics(1<<40) {
		t.Fatal("checkValueLen does not stop at 4 GiB - 1")
	}
}
