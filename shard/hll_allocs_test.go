package shard

import (
	"testing"

	"github.com/svcdb/svcdb/core/command"
)

// TestPFAddDenseNoAllocs: PFADD to a dense HLL, and PFCOUNT of it, allocate
// nothing (the registers are changed in place).
func TestPFAddDenseNoAllocs(t *testing.T) {
	e := newExecer(t)
	pfadd, pfcount := e.table.Lookup([]byte("pfadd")), e.table.Lookup([]byte("pfcount"))
	pfdebug := e.table.Lookup([]byte("pfdebug"))
	key := []byte("visitors")
	e.run(pfadd, []byte("pfadd"), key, []byte("first"))
	e.run(pfdebug, []byte("pfdebug"), []byte("todense"), key)
	ele := []byte("visitor:0000")
	i := 0
	for _, c := range []struct {
		name string
		cmd  *command.Command
		args [][]byte
	}{
		{"PFADD dense", pfadd, [][]byte{[]byte("pfadd"), key, ele}},
		{"PFCOUNT dense", pfcount, [][]byte{[]byte("pfcount"), key}},
	} {
		if n := testing.AllocsPerRun(200, func() {
			ele[len(ele)-1], ele[len(ele)-2] = byte('0'+i%10), byte('0'+i/10%10)
			i++
			e.run(c.cmd, c.args...)
		}); n != 0 {
			t.Errorf("%s: %.1f allocations per call, want 0", c.name, n)
		}
	}
}
