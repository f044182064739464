package replication

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"testing"
)

func TestNewID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{40}$`)
	a, b := NewID(), NewID()
	if !re.MatchString(a) || !re.MatchString(b) || a == b {
		t.Errorf("IDs %q %q", a, b)
	}
	ids := NewIDs()
	if ids.ID2 != zeroID || ids.Offset2 != -1 {
		t.Errorf("fresh IDs %+v", ids)
	}
	old := ids.ID
	ids.Shift(1000)
	if ids.ID2 != old || ids.Offset2 != 1001 || ids.ID == old || !re.MatchString(ids.ID) {
		t.Errorf("after Shift(1000): %+v (old %s)", ids, old)
	}
}

// TestBacklogAgainstReference feeds random pieces into a small ring and
// compares every query with the whole stream kept aside.
func TestBacklogAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{1, 7, 64, 1000} {
		const start = 500
		b := NewBacklog(size, start)
		var all []byte // every byte fed; all[i] is offset start+1+i
		var held int64 // what the ring must hold: bytes dropped never return
		for step := 0; step < 300; step++ {
			switch step {
			case 100: // grow: what was dropped stays dropped
				size = size*2 + 3
				b.Resize(size)
			case 200: // shrink: the newest bytes stay
				size = max(1, size/3)
				b.Resize(size)
				held = min(held, int64(size))
			}
			p := make([]byte, rng.IntN(3*size/2+2))
			for i := range p {
				p[i] = byte(rng.IntN(256))
			}
			b.Feed(p)
			all = append(all, p...)
			end := int64(start + len(all))
			held = min(held+int64(len(p)), int64(size))
			if b.Offset() != end || b.Len() != held || b.First() != end-held+1 || b.Size() != size {
				t.Fatalf("size %d step %d: offset %d len %d first %d; want %d %d %d", size, step, b.Offset(), b.Len(), b.First(), end, held, end-held+1)
			}
			for _, o := range []int64{b.First() - 1, b.First(), b.First() + held/2, end, end + 1, end + 2} {
				want := o >= end-held+1 && o <= end+1
				if b.Has(o) != want {
					t.Fatalf("size %d: Has(%d) = %v", size, o, !want)
				}
				if want && !bytes.Equal(b.Since(o), all[o-start-1:]) {
					t.Fatalf("size %d step %d: Since(%d) differs", size, step, o)
				}
			}
		}
	}
}

func TestDecidePSync(t *testing.T) {
	ids := IDs{ID: "A", ID2: "B", Offset2: 101}
	bl := NewBacklog(100, 0)
	bl.Feed(make([]byte, 150)) // holds offsets 51..150
	for _, tc := range []struct {
		name   string
		bl     *Backlog
		psync2 bool
		id     string
		off    int64
		cont   bool
		reply  string
	}{
		{"our id in the backlog", bl, true, "A", 60, true, "+CONTINUE A\r\n"},
		{"our id, old replica", bl, false, "A", 60, true, "+CONTINUE\r\n"},
		{"the next byte", bl, true, "A", 151, true, "+CONTINUE A\r\n"},
		{"past the end", bl, true, "A", 152, false, "+FULLRESYNC A 150\r\n"},
		{"before the backlog", bl, true, "A", 50, false, "+FULLRESYNC A 150\r\n"},
		{"secondary id up to its end", bl, true, "B", 101, true, "+CONTINUE A\r\n"},
		{"secondary id past its end", bl, true, "B", 102, false, "+FULLRESYNC A 150\r\n"},
		{"unknown id", bl, true, "C", 60, false, "+FULLRESYNC A 150\r\n"},
		{"PSYNC ? -1", bl, true, "?", -1, false, "+FULLRESYNC A 150\r\n"},
		{"no backlog", nil, true, "A", 60, false, "+FULLRESYNC A 150\r\n"},
	} {
		d := DecidePSync(ids, tc.bl, tc.psync2, tc.id, tc.off, 150)
		if d.Continue != tc.cont || d.Reply != tc.reply || (tc.cont && d.Offset != tc.off) {
			t.Errorf("%s: %+v", tc.name, d)
		}
	}
	// No secondary ID ("000..."): a replica asking for it gets a full sync.
	if d := DecidePSync(NewIDs(), bl, true, zeroID, 60, 150); d.Continue {
		t.Errorf("zero secondary ID continued: %+v", d)
	}
}
