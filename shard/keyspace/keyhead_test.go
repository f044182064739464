package keyspace

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// keyLengths are the key lengths around the prefix's boundaries (object.go,
// "The key behind one pointer"): the empty key, the tiny allocator's,
// the last and first of each prefix, and long keys.
var keyLengths = []int{0, 1, 10, 11, 14, 15, 16, 31, 126, 127, 128, 129, 255, 256, 1000, 70000}

// keyOfLen is a key of n bytes, distinct for each tag.
func keyOfLen(n int, tag int) string {
	s := fmt.Sprintf("%d:", tag)
	if n < len(s) {
		return strings.Repeat(string(rune('a'+tag%26)), n)
	}
	return s + strings.Repeat("k", n-len(s))
}

// TestKeyPrefix: every way of making a key (Insert, InsertString colocated
// or not, unshareKey, SetString colocating again) gives an allocation
// whose prefix reads back the key, and a key string taken from the slot
// stays valid through every later change and a collection.
func TestKeyPrefix(t *testing.T) {
	d := newDB()
	model := map[string]modelEntry{}
	var held []string // as WATCH, the blocked table or a snapshot hold keys
	var want []string
	for i, n := range keyLengths {
		for j, val := range []string{"", "", "v", strings.Repeat("x", 32)} {
			key := keyOfLen(n, 4*i+j)
			if n == 0 && j > 0 {
				continue // one empty key
			}
			var o *Object
			if j == 0 { // and then SetString: "" once failed for keys of 16 bytes or more (colocates)
				o = d.Insert([]byte(key), KindString)
				d.SetString(o, []byte(val))
			} else {
				o = d.InsertString([]byte(key), []byte(val))
			}
			model[key] = modelEntry{val: val}
			if o.Key() != key {
				t.Fatalf("key of %d bytes reads back %d bytes", n, len(o.Key()))
			}
			if got, want := uintptr(unsafe.Pointer(unsafe.StringData(o.Key())))-uintptr(o.key), uintptr(keyPrefixLen(n)); n > 0 && got != want {
				t.Fatalf("key of %d bytes: its bytes %d after the allocation's start; want a prefix of %d", n, got, want)
			}
			if colocated := o.words == wordsKeyBytes; colocated != (j > 1 && colocates(n, len(val))) {
				t.Fatalf("key of %d bytes, value of %d: colocated %v", n, len(val), colocated)
			}
			if f, _ := d.Find([]byte(key)); f != o {
				t.Fatalf("Find(key of %d bytes) = %p; want %p", n, f, o)
			}
			held, want = append(held, o.Key()), append(want, key)
			checkDB(t, d, model)
		}
	}
	// Every value off the shared allocation and back, the keys read again.
	for key := range model {
		o, _ := d.Find([]byte(key))
		d.SetInt(o, 42) // unshareKey
		held, want = append(held, o.Key()), append(want, key)
		d.SetString(o, []byte(strings.Repeat("y", 40))) // colocated again where it fits
		held, want = append(held, o.Key()), append(want, key)
		model[key] = modelEntry{val: strings.Repeat("y", 40)}
	}
	checkDB(t, d, model)
	for key := range model {
		o, _ := d.Find([]byte(key))
		d.Remove(o)
	}
	checkDB(t, d, map[string]modelEntry{})
	// New keys over the freed allocations: a held key must not change.
	for i := range 2000 {
		d.InsertString([]byte(keyOfLen(11+i%40, i)), []byte(strings.Repeat("z", i%64)))
	}
	runtime.GC()
	for i, k := range held {
		if k != want[i] {
			t.Fatalf("held key %d reads %q; want %q", i, k[:min(len(k), 40)], want[i][:min(len(want[i]), 40)])
		}
	}
}

// TestKeyLengthsModel is TestColocatedModel over keys of every prefix's
// lengths: inserts, overwrites of every size, integers, growth and
// deletes, with checkDB (the prefixes, value words and the accounting
// with each key's prefix in its size class) after every step.
func TestKeyLengthsModel(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		d := newDB()
		model := map[string]modelEntry{}
		for step := range 1500 {
			i := r.IntN(60)
			key := keyOfLen(keyLengths[i%len(keyLengths)], i)
			o, _ := d.Find([]byte(key))
			switch op := r.IntN(10); {
			case op < 5:
				val := strings.Repeat(string(rune('a'+step%26)), r.IntN(70))
				if o == nil {
					d.InsertString([]byte(key), []byte(val))
				} else {
					d.SetString(o, []byte(val))
				}
				model[key] = modelEntry{val: val}
			case op < 6 && o != nil && o.Enc != EncInt:
				d.GrowString(o, len(o.Bytes())+r.IntN(40))
				model[key] = modelEntry{val: string(o.Bytes())}
			case op < 7 && o != nil:
				d.SetInt(o, int64(step))
				model[key] = modelEntry{}
			case op < 9 && o != nil:
				d.Remove(o)
				delete(model, key)
			}
			checkDB(t, d, model)
		}
	}
}

// TestKeyCostSizeClasses: what the docs say of the prefix's cost
// (docs/architecture.md, "Bytes per key"): a 10-11 byte key with its
// prefix stays in the 16-byte class and with a 32-byte value in the
// 48-byte one; a key that filled its class exactly moves up.
func TestKeyCostSizeClasses(t *testing.T) {
	for _, c := range []struct{ klen, cost int }{
		{0, 0}, {10, 16}, {11, 16}, {15, 16}, {16, 24}, {23, 24}, {24, 32}, {127, 128}, {128, 144},
	} {
		if got := keyCost(c.klen); got != c.cost {
			t.Errorf("keyCost(%d) = %d; want %d", c.klen, got, c.cost)
		}
	}
	for _, klen := range []int{10, 11} {
		if got := AllocSize(keyHeadLen(klen) + 32); got != 48 {
			t.Errorf("a %d-byte key with a 32-byte value takes %d bytes; want 48", klen, got)
		}
	}
}
