//go:build !race

package command

import "testing"

// The race detector instruments allocations, so these run without -race.

func TestLookupAllocs(t *testing.T) {
	tab := New()
	names := [][]byte{[]byte("GET"), []byte("get"), []byte("IncrByFloat"), []byte("nosuch"), []byte("CLIENT|SETNAME")}
	client := tab.Lookup([]byte("client"))
	sub := []byte("SetName")
	full := []byte("Client|SetName")
	args := argv("MSET a 1 b 2 c 3")
	mset := tab.Lookup(args[0])
	dst := make([]int, 0, 8)
	var sink int
	allocs := testing.AllocsPerRun(1000, func() {
		for _, n := range names {
			if tab.Lookup(n) != nil {
				sink++
			}
		}
		if tab.LookupSub(client, sub) != nil {
			sink++
		}
		if tab.LookupFullName(full) != nil {
			sink++
		}
		sink += len(mset.Keys(args, dst[:0]))
		if mset.CheckArity(len(args)) {
			sink++
		}
	})
	if allocs != 0 {
		t.Errorf("lookup path allocates %v times per run, want 0", allocs)
	}
	if sink == 0 {
		t.Fatal("lookups found nothing")
	}
}
