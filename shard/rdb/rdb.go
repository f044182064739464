// Package rdb owns the codec for Redis' RDB snapshot format as Redis 7.0
// writes and reads it (RDB version 10): encoding keys into byte slices a
// shard appends to its own buffer, a Writer that frames them into a file
// (header, AUX fields, SELECTDB/RESIZEDB, EOF, CRC64), and Load, which reads
// any file Redis 7.0 reads (versions 1..10, every value encoding from zipmap
// to stream listpacks 2, LZF-compressed strings).
//
// It knows nothing about shards, sockets or files on disk beyond io.Reader
// and io.Writer, and it must never panic, hang or allocate without bound on
// corrupt input: every error names the byte offset where reading failed,
// lengths are checked against the bytes that really arrive, and embedded
// blobs (listpacks, ziplists, intsets, zipmaps) are validated before use.
//
// The codec is written here rather than taken from github.com/hdt3213/rdb:
// that encoder writes "REDIS0011", which Redis 7.0 (Debian's redis-server and
// redis-check-rdb) refuses ("Can't handle RDB format version 11"), and its
// loader does not fail cleanly with offsets on corrupt input, which our
// fuzzing demands.
package rdb

import "github.com/svcdb/svcdb/shard/values"

// Version is the RDB format version Writer.Header writes ("REDIS0010"),
// the one Redis 7.0 writes; Load accepts 1..Version.
const Version = 10

// Value types, numbered as Redis 7.0's rdb.h.
const (
	TypeString           byte = 0
	TypeList             byte = 1
	TypeSet              byte = 2
	TypeZSet             byte = 3
	TypeHash             byte = 4
	TypeZSet2            byte = 5
	TypeHashZipmap       byte = 9
	TypeListZiplist      byte = 10
	TypeSetIntset        byte = 11
	TypeZSetZiplist      byte = 12
	TypeHashZiplist      byte = 13
	TypeListQuicklist    byte = 14
	TypeStreamListpacks  byte = 15
	TypeHashListpack     byte = 16
	TypeZSetListpack     byte = 17
	TypeListQuicklist2   byte = 18
	TypeStreamListpacks2 byte = 19
)

// Module value types (rdb.h): Load refuses them with an error naming the offset.
const (
	typeModulePreGA byte = 6
	typeModule2     byte = 7
)

// Opcodes, as Redis 7.0's rdb.h.
const (
	opFunction2     byte = 245
	opFunctionPreGA byte = 246
	opModuleAux     byte = 247
	opIdle          byte = 248
	opFreq          byte = 249
	opAux           byte = 250
	opResizeDB      byte = 251
	opExpireTimeMs  byte = 252
	opExpireTime    byte = 253
	opSelectDB      byte = 254
	opEOF           byte = 255
)

// Length and string encodings (rdb.h RDB_6BITLEN ... RDB_ENC_LZF).
const (
	len6Bit  = 0
	len14Bit = 1
	len32    = 0x80
	len64    = 0x81
	lenEnc   = 3

	encInt8  = 0
	encInt16 = 1
	encInt32 = 2
	encLZF   = 3
)

// Quicklist 2 node containers (quicklist.h).
const (
	quicklistNodePlain  = 1
	quicklistNodePacked = 2
)

// Entry is one key read from a file. Load hands each Entry to the callback,
// which may keep the Entry's slices (they are not reused; the *Entry itself
// is, so keep its fields, not the pointer). Exactly the field of its Kind is
// set; collections are never empty (Redis skips empty keys at load, and so
// does Load, counting them in Info.EmptyKeysSkipped) and hold no duplicate
// set members, hash fields or zset members.
type Entry struct {
	DB       int
	Key      []byte
	ExpireAt int64       // unix milliseconds; 0 = no expiry
	Kind     values.Kind // what it holds, whatever its encoding in the file
	Str      []byte      // values.KindString
	Elems    [][]byte    // values.KindList (head to tail), values.KindSet (members; intset members in decimal)
	Pairs    [][]byte    // values.KindHash: field, value, field, value ...
	ZSet     []ZMember   // values.KindZSet, in any order; no NaN scores
	Stream   *Stream     // values.KindStream
	// Type is the RDB value type the key was stored as (TypeHashListpack,
	// TypeSetIntset ...), for statistics and tests; Kind is what it holds.
	Type byte
}

// ZMember is one sorted-set member and its score.
type ZMember struct {
	Member []byte
	Score  float64
}

// Info is what Load learned besides the keys.
type Info struct {
	Version int
	Aux     map[string]string // AUX fields (redis-ver, ctime, aof-base ...)
	// Functions are the codes of the function libraries (FUNCTION2
	// records), in file order.
	Functions [][]byte
	// EmptyKeysSkipped counts collections stored with no elements, which
	// Redis 7.0 skips at load ("empty keys skipped") and so does Load.
	EmptyKeysSkipped int
}

// StreamID is a stream entry ID, ms-seq.
type StreamID struct{ Ms, Seq uint64 }

// Less reports whether id sorts before o.
func (id StreamID) Less(o StreamID) bool {
	return id.Ms < o.Ms || (id.Ms == o.Ms && id.Seq < o.Seq)
}

// StreamEntry is one live stream entry.
type StreamEntry struct {
	ID     StreamID
	Fields [][]byte // field, value, field, value ...
}

// Stream is a stream in neutral form. Invariants (Load guarantees them and
// AppendStream expects them): Entries ascend by ID, Length == len(Entries),
// every group PEL ascends by ID, and each pending entry's Consumer is nil or
// the name of one of the group's Consumers.
type Stream struct {
	Entries      []StreamEntry // ascending IDs, live entries only
	Length       uint64        // live entries
	LastID       StreamID
	FirstID      StreamID
	MaxDeletedID StreamID
	EntriesAdded uint64
	Groups       []StreamGroup
}

// StreamGroup is one consumer group.
type StreamGroup struct {
	Name        []byte
	LastID      StreamID
	EntriesRead int64           // -1 = unknown (Redis' SCG_INVALID_ENTRIES_READ)
	PEL         []StreamPending // ascending IDs
	Consumers   []StreamConsumer
}

// StreamPending is one entry of a group's pending entries list.
type StreamPending struct {
	ID            StreamID
	DeliveryTime  int64 // unix ms
	DeliveryCount uint64
	Consumer      []byte // name of the consumer owning it
}

// StreamConsumer is one consumer of a group; the entries it owns are the
// group PEL entries naming it.
type StreamConsumer struct {
	Name     []byte
	SeenTime int64 // unix ms
}
