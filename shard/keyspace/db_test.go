package keyspace

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// checkDB verifies DB's written invariants (see the DB doc) against a model.
func checkDB(t *testing.T, d *DB, model map[string]modelEntry) {
	t.Helper()
	if len(d.Index()) != len(model) || d.keys.Load() != int64(len(model)) {
		t.Fatalf("index has %d keys, counter %d; model has %d", len(d.Index()), d.keys.Load(), len(model))
	}
	if err := d.index.Verify(d.hashAt); err != nil {
		t.Fatalf("key index: %v", err)
	}
	if err := d.VerifyValueWords(); err != nil {
		t.Fatal(err)
	}
	live, volatile := 0, 0
	for pos := uint32(0); pos < d.used; pos++ {
		o := d.Slot(pos)
		if o.Kind == KindNone {
			continue
		}
		live++
		if got, ok := d.Index()[o.Key()]; !ok || got != pos {
			t.Fatalf("slot %d holds %q but the index says %d (%v)", pos, o.Key(), got, ok)
		}
		m, ok := model[o.Key()]
		if !ok || string(o.Bytes()) != m.val || d.ExpireAtSlot(pos) != m.expireAt || d.ExpireAt(o) != m.expireAt {
			t.Fatalf("slot %d: %q=%q exp %d; model %+v (present %v)", pos, o.Key(), o.Bytes(), d.ExpireAtSlot(pos), m, ok)
		}
		if o.HasExpire() {
			volatile++
			if d.expireAtSlot(pos) <= 0 {
				t.Fatalf("key %q: flagged with an expiry, time %d", o.Key(), d.expireAtSlot(pos))
			}
			if i := *d.placeOf(pos); i < 0 || int(i) >= len(d.volatile) || d.volatile[i] != pos {
				t.Fatalf("key %q: place %d in volatile does not point back at slot %d", o.Key(), i, pos)
			}
		}
	}
	if live != len(model) {
		t.Fatalf("%d live slots; want %d", live, len(model))
	}
	if volatile != len(d.volatile) || d.expires.Load() != int64(volatile) {
		t.Fatalf("%d keys with expiry; volatile list %d, counter %d", volatile, len(d.volatile), d.expires.Load())
	}
	if len(model) > 0 && int(d.used)-len(d.free) != live {
		t.Fatalf("used %d - free %d != live %d", d.used, len(d.free), live)
	}
	checkAccounting(t, d)
}

type modelEntry struct {
	val      string
	expireAt int64
}

// TestDBModel runs random inserts, overwrites, deletes, expiry changes and
// expiry cycles against a plain map and checks every invariant after each.
func TestDBModel(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, seed))
			d := newDB()
			model := map[string]modelEntry{}
			now := int64(1_000_000)
			for step := 0; step < 3000; step++ {
				key := fmt.Sprintf("k%d", r.IntN(200))
				switch op := r.IntN(10); {
				case op < 4: // SET
					val := fmt.Sprintf("v%d-%s", step, string(make([]byte, r.IntN(40))))
					o := d.Lookup([]byte(key), now)
					if o == nil {
						if m, ok := model[key]; ok && m.expireAt != 0 && m.expireAt <= now {
							delete(model, key) // lazily expired by lookup
						}
						o = d.Insert([]byte(key), KindString)
					}
					d.SetString(o, []byte(val))
					d.SetExpire(o, 0)
					model[key] = modelEntry{val: val}
				case op < 6: // DEL
					if o := d.Lookup([]byte(key), now); o != nil {
						d.Remove(o)
					}
					delete(model, key)
				case op < 8: // EXPIRE / PERSIST
					o := d.Lookup([]byte(key), now)
					if o == nil {
						delete(model, key)
						break
					}
					at := int64(0)
					if r.IntN(3) > 0 {
						at = now + int64(r.IntN(100)) + 1
					}
					d.SetExpire(o, at)
					m := model[key]
					m.expireAt = at
					model[key] = m
				case op < 9: // time passes, then an active cycle
					now += int64(r.IntN(50))
					d.expireCycle(now, 1<<62)
					for k, m := range model {
						if m.expireAt != 0 && m.expireAt <= now {
							if _, still := d.Index()[k]; !still {
								delete(model, k)
							}
						}
					}
				default: // FLUSHDB now and then
					if r.IntN(50) == 0 {
						d.Flush()
						clear(model)
					}
				}
				checkDB(t, d, model)
			}
		})
	}
}

// TestDBMemoryAccounting: the figure returns to zero when every key is gone.
func TestDBMemoryAccounting(t *testing.T) {
	d := newDB()
	for i := range 100 {
		o := d.Insert(fmt.Appendf(nil, "key%d", i), KindString)
		d.SetString(o, make([]byte, i*10))
	}
	if d.Memory() <= 0 {
		t.Fatal("no memory accounted")
	}
	if d.IndexBytes() < 100*5 {
		t.Fatalf("key index of 100 keys holds %d bytes", d.IndexBytes())
	}
	for i := range 100 {
		o, _ := d.Find(fmt.Appendf(nil, "key%d", i))
		d.SetString(o, make([]byte, 5)) // shrinking reallocates
		d.Remove(o)
	}
	if m := d.Memory(); m != 0 {
		t.Fatalf("memory %d after deleting every key; want 0", m)
	}
	if b := d.IndexBytes(); b != 0 {
		t.Fatalf("key index holds %d bytes after deleting every key; want 0", b)
	}
}
