package keyspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/svcdb/svcdb/shard/values"
)

// sharesKey reports whether o's value words sit in its key's allocation,
// right after the key (the Object doc's "Key and value in one allocation").
func sharesKey(o *Object) bool {
	return o.words == wordsKeyBytes && o.ptr == unsafe.Add(unsafe.Pointer(unsafe.StringData(o.Key())), len(o.Key()))
}

// TestInsertStringColocates: a new string key and its value are one
// allocation, and only when colocates says so.
func TestInsertStringColocates(t *testing.T) {
	d := newDB()
	for _, c := range []struct {
		key, val string
		shared   bool
	}{
		{"memtier-1234567", strings.Repeat("x", 32), true},
		{"k", "0123456789abcde", true}, // 16 bytes together
		{"k2", "short", false},         // 7: the tiny allocator's
		{"k3", "", false},
		{"big", strings.Repeat("y", maxSmallAlloc), false},
	} {
		o := d.InsertString([]byte(c.key), []byte(c.val))
		if o.Key() != c.key || string(o.Bytes()) != c.val || o.Kind != KindString || o.Enc != EncRaw {
			t.Fatalf("InsertString(%q): key %q, value %d bytes, kind %d, enc %d", c.key, o.Key(), len(o.Bytes()), o.Kind, o.Enc)
		}
		if sharesKey(o) != c.shared {
			t.Errorf("InsertString(%q, %d bytes): shares the key's allocation %v; want %v", c.key, len(c.val), sharesKey(o), c.shared)
		}
	}
	if err := d.VerifyValueWords(); err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, d)
	keys := make([][]byte, 2001)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "key:%08d", i)
	}
	val, i := []byte("0123456789abcdef0123456789abcdef"), 0
	if got := testing.AllocsPerRun(2000, func() {
		d.InsertString(keys[i], val)
		i++
	}); got > 1.2 { // slot chunks and index tables now and then
		t.Errorf("InsertString allocates %.2f times a key; want 1 (key and value together)", got)
	}
}

// TestColocatedKeyOutlivesValue: a key string taken from a colocated object
// (as WATCH, the blocked table or a snapshot keep one) keeps its bytes
// whatever the value then becomes, and every way off the shared allocation
// gives the key one of its own, with used_memory exact throughout.
func TestColocatedKeyOutlivesValue(t *testing.T) {
	d := newDB()
	key := []byte("colocated:key")
	o := d.InsertString(key, []byte("first value, thirty-two bytes!!!"))
	held := o.Key()
	var lastShared *byte // the key bytes of the last allocation shared with a value
	step := func(what string, wantShared bool) {
		t.Helper()
		if wantShared {
			lastShared = unsafe.StringData(o.Key())
		} else if unsafe.StringData(o.Key()) == lastShared {
			t.Fatalf("%s: the key still lives in the allocation it shared with a value", what)
		}
		if held != string(key) || o.Key() != string(key) {
			t.Fatalf("%s: the held key reads %q, the slot's %q; want %q", what, held, o.Key(), key)
		}
		if sharesKey(o) != wantShared {
			t.Fatalf("%s: shares the key's allocation %v; want %v", what, sharesKey(o), wantShared)
		}
		if err := d.VerifyValueWords(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		checkAccounting(t, d)
	}
	step("insert", true)
	first := o.ptr
	d.SetString(o, []byte("same size value, thirty-two byte"))
	if o.ptr != first {
		t.Fatal("an overwrite of the same size moved the value")
	}
	step("overwrite in place", true)
	d.SetString(o, []byte(strings.Repeat("z", 100)))
	step("a longer value, colocated again", true)
	d.GrowString(o, 500) // APPEND past its capacity: an array of its own
	step("grown", false)
	d.SetString(o, []byte("back to a short one, thirty-two."))
	step("colocated again", true)
	d.SetInt(o, 42)
	step("an integer", false)
	d.SetString(o, []byte("a string once more, thirty-two.."))
	step("a string again", true)
	d.DropValue(o)
	o.Kind, o.Enc = KindHash, EncHashtable
	o.SetColl(values.NewHTable(false, 4))
	d.ValueChanged(o, 0)
	step("a collection", false)
	d.DropValue(o)
	d.SetString(o, []byte("and a string, for RENAME's move."))
	step("a string for the move", true)

	// RENAME: the value moves to another key as a copy of its own.
	var tmp Object
	size := o.ValueMemory()
	MoveValue(&tmp, o)
	d.AddMemory(-size)
	step("moved out", false)
	d.Remove(o)
	n := d.Insert([]byte("renamed"), KindString)
	MoveValue(n, &tmp)
	d.AddMemory(n.ValueMemory())
	if string(n.Bytes()) != "and a string, for RENAME's move." || sharesKey(n) {
		t.Fatalf("moved value %q, shares a key %v", n.Bytes(), sharesKey(n))
	}
	if held != string(key) {
		t.Fatalf("the held key reads %q after its slot went", held)
	}
	if err := d.VerifyValueWords(); err != nil {
		t.Fatal(err)
	}
	checkAccounting(t, d)
}

// TestColocatedModel: random SETs of random sizes (new keys through
// InsertString), in-place growth, integers and deletes against a map, with
// every invariant (checkDB: value words, accounting) after each step.
func TestColocatedModel(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		d := newDB()
		model := map[string]modelEntry{}
		for step := range 2000 {
			key := fmt.Sprintf("key:%d", r.IntN(150))
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
				n := len(o.Bytes())
				d.GrowString(o, n+r.IntN(40))
				model[key] = modelEntry{val: string(o.Bytes())}
			case op < 7 && o != nil:
				d.SetInt(o, int64(step))
				model[key] = modelEntry{} // checkDB compares Bytes(): none for an integer
			case op < 9 && o != nil:
				d.Remove(o)
				delete(model, key)
			}
			checkDB(t, d, model)
		}
	}
}
