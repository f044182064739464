package command

// nameIndex finds a top-level command by the name a client sent, ASCII
// case-insensitively, with one pass over the name's bytes (lowering and
// hashing together) and one probe of a small open-addressing table: every
// request does this, and the Go map it replaces cost about a tenth of the
// hot path's CPU (lowering, then aeshash, then the map's group probe).
//
// Invariants (kept by newNameIndex, the only writer; the index is never
// changed after the table is built, so loops read it without locks):
//   - len(slots) is a power of two at least 4x the number of commands, so
//     a probe sequence is short and always reaches an empty slot
//   - every command sits in the probe sequence of nameHash(its Name), with
//     no empty slot between its home and where it is
type nameIndex struct {
	slots []*Command
	mask  uint32
}

// nameHash is FNV-1a over the name's lowered bytes; lowered receives them.
// REQUIRES: len(lowered) >= len(name).
func nameHash(name, lowered []byte) uint32 {
	h := uint32(2166136261)
	for i, c := range name {
		c = lower(c)
		lowered[i] = c
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

func newNameIndex(cmds []*Command) nameIndex {
	size := 16
	for size < 4*len(cmds) {
		size *= 2
	}
	ix := nameIndex{slots: make([]*Command, size), mask: uint32(size - 1)}
	var buf [maxNameLen]byte
	for _, c := range cmds {
		i := nameHash([]byte(c.Name), buf[:]) & ix.mask
		for ix.slots[i] != nil {
			i = (i + 1) & ix.mask
		}
		ix.slots[i] = c
	}
	return ix
}

// find returns the command called name (any case), or nil.
func (ix *nameIndex) find(name []byte) *Command {
	if len(name) > maxNameLen {
		return nil
	}
	var buf [maxNameLen]byte
	lowered := buf[:len(name)]
	for i := nameHash(name, lowered) & ix.mask; ; i = (i + 1) & ix.mask {
		c := ix.slots[i]
		if c == nil || c.Name == string(lowered) {
			return c
		}
	}
}
