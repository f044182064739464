package values

// Collection is a value held in a full structure (hash table, skiplist,
// quicklist, stream) rather than in one flat buffer. Each type keeps its own
// byte count current as it changes, so memory accounting never walks a value.
type Collection interface {
	// Memory is the bytes the structure holds (entries, their bytes and the
	// structure's own overhead, approximately), kept current by its mutators.
	Memory() int64
	// Clone returns a deep copy (COPY).
	Clone() Collection
}
