package values

// Kind is the type of a value, as TYPE reports it. The keyspace (an object's
// kind) and the RDB codec (what a loaded key holds, whatever its encoding in
// the file) share this one enum.
type Kind uint8

const (
	KindNone Kind = iota // no value: an empty keyspace slot, a missing key
	KindString
	KindList
	KindSet
	KindZSet
	KindHash
	KindStream
)

// String names the kind as TYPE does ("none" for KindNone).
func (k Kind) String() string {
	switch k {
	case KindNone:
		return "none"
	case KindString:
		return "string"
	case KindList:
		return "list"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	case KindHash:
		return "hash"
	case KindStream:
		return "stream"
	}
	return "unknown"
}
