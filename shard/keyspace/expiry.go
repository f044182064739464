package keyspace

// Keys' expiry times, kept beside the slots rather than in them (see the
// Object doc, "Expiry beside the slot").
//
// Layout: DB.expiry has one entry per chunk of slots, nil until some key of
// that chunk gets an expiry. An expiryChunk holds, for each slot of its
// chunk, the key's expiry time and its place in DB.volatile (the list the
// active expiry cycle and the volatile-* eviction policies sample). Both
// are meaningful only while the slot's flagExpire is set; a slot that
// loses its key or its expiry leaves stale values behind, never read.
//
// Invariants (checkDB checks them):
//   - slot(i).HasExpire()  ⇔  volatile[place(i)] == i, and volatile holds
//     nothing else;
//   - slot(i).HasExpire()  ⇒  expiry[i>>chunkBits] != nil and its at[i] > 0;
//   - expChunks is the number of non-nil entries of expiry (memory.go counts
//     them as allocated).
//
// The times and the places are two arrays, not one array of pairs: a lookup
// reads only the time, and {int64, int32} pairs would pad to 16 bytes a
// slot (12 KiB a chunk as it is: a size class of its own, so nothing is
// rounded away).

// expiryChunk is the expiry data of one chunk of slots.
type expiryChunk struct {
	at    [chunkSize]int64 // unix milliseconds, > 0, where the slot's flagExpire is set
	place [chunkSize]int32 // the slot's index in DB.volatile, where flagExpire is set
}

// ExpireAt is o's expiry time (unix ms), or 0 when it has none. A key
// without expiry costs the flag test only; one with an expiry finds its
// slot position by the index (posOf: the key's hash, and a probe of the
// bucket its lookup just read), then reads the time beside it. Callers that
// know the position use ExpireAtSlot. REQUIRES: o is a live slot of d.
func (d *DB) ExpireAt(o *Object) int64 {
	if !o.HasExpire() {
		return 0
	}
	return d.expireAtSlot(d.posOf(o))
}

// ExpireAtSlot is ExpireAt of the key in slot pos (SCAN, the snapshot and
// the samplers, which walk positions). 0 for an empty slot.
func (d *DB) ExpireAtSlot(pos uint32) int64 {
	if !d.Slot(pos).HasExpire() {
		return 0
	}
	return d.expireAtSlot(pos)
}

// Expired reports whether o has an expiry at or before now (unix ms).
// REQUIRES: o is a live slot of d.
func (d *DB) Expired(o *Object, now int64) bool {
	return o.HasExpire() && d.ExpireAt(o) <= now
}

// expireAtSlot is the expiry time of slot pos. REQUIRES: the slot's
// flagExpire is set (so its chunk exists).
func (d *DB) expireAtSlot(pos uint32) int64 {
	return d.expiry[pos>>chunkBits].at[pos&(chunkSize-1)]
}

// SetExpire gives o an expiry (unix ms, > 0), or removes it when at == 0.
func (d *DB) SetExpire(o *Object, at int64) {
	if at == 0 {
		if o.HasExpire() {
			d.clearExpire(o)
		}
		return
	}
	d.Touched(o.Key())
	pos := d.posOf(o)
	c, i := d.expiryChunkOf(pos), pos&(chunkSize-1)
	if !o.HasExpire() {
		c.place[i] = int32(len(d.volatile))
		d.volatile = append(d.volatile, pos)
		o.flags |= flagExpire
		d.expires.Store(int64(len(d.volatile)))
		d.accountStructure()
	}
	c.at[i] = at
}

func (d *DB) clearExpire(o *Object) {
	d.Touched(o.Key())
	d.unindexExpire(o, d.posOf(o))
}

// expiryChunkOf is the expiry chunk of slot pos, made on first use.
func (d *DB) expiryChunkOf(pos uint32) *expiryChunk {
	c := int(pos >> chunkBits)
	for c >= len(d.expiry) {
		d.expiry = append(d.expiry, nil)
	}
	if d.expiry[c] == nil {
		d.expiry[c] = new(expiryChunk)
		d.expChunks++
	}
	return d.expiry[c]
}

// placeOf is where slot pos's place in volatile is kept. REQUIRES: the
// slot's chunk of expiry data exists.
func (d *DB) placeOf(pos uint32) *int32 {
	return &d.expiry[pos>>chunkBits].place[pos&(chunkSize-1)]
}

// unindexExpire removes o's expiry and its place in volatile; pos is o's
// slot position. REQUIRES: o.HasExpire().
func (d *DB) unindexExpire(o *Object, pos uint32) {
	i := *d.placeOf(pos)
	last := len(d.volatile) - 1
	if int(i) != last {
		moved := d.volatile[last]
		d.volatile[i] = moved
		*d.placeOf(moved) = i
	}
	d.volatile = d.volatile[:last]
	o.flags &^= flagExpire
	d.expires.Store(int64(len(d.volatile)))
	d.accountStructure()
}
