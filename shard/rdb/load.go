package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/svcdb/svcdb/shard/values"
	"hash/maphash"
	"io"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
)

// Load reads an RDB file of any version Redis 7.0 reads (1..10), every value
// type Redis 7.0 can write or load (including ziplist, zipmap, intset,
// listpack, quicklist, quicklist2, stream listpacks 1 and 2; LZF-compressed
// strings; EXPIRETIME, EXPIRETIME_MS, SELECTDB, RESIZEDB, AUX, IDLE, FREQ
// opcodes; FUNCTION2 and MODULE_AUX and module types give a clear error
// naming the offset), and checks the CRC64 when it is not zero. Errors name
// the byte offset and what was expected ("rdb: offset 1234: unknown value
// type 42"). A truncated file is an error, never a panic or a hang; corrupt
// lengths never cause huge allocations (they are bounded by the bytes that
// really arrive). An error returned by fn stops Load and is returned as is.
//
// Like Redis, Load skips keys whose collection is empty (counted in
// Info.EmptyKeysSkipped) and rejects duplicate set members, hash fields and
// zset members and NaN scores. It is stricter than Redis' default (non-deep)
// checks in one way: every embedded listpack, ziplist, intset and zipmap is
// validated in full, as Redis does only with sanitize-dump-payload yes.
func Load(r io.Reader, fn func(e *Entry) error) (info Info, err error) {
	d := &decoder{r: r, buf: make([]byte, 64<<10)}
	defer func() {
		if p := recover(); p != nil {
			// A bug in the decoder, never a property of the input: report it
			// as an error rather than take the server down with it.
			err = fmt.Errorf("rdb: offset %d: internal error: %v\n%s", d.offset(), p, debug.Stack())
		}
	}()
	info, err = d.load(fn)
	return info, err
}

// decoder reads an RDB stream through its own buffer, keeping the file
// offset of buf[0] and a running CRC64 of every byte consumed before
// crcPos. Slices it hands out are never overwritten: values are copied out
// of buf into fresh allocations.
type decoder struct {
	r        io.Reader
	buf      []byte
	pos, end int   // unread bytes are buf[pos:end]
	base     int64 // file offset of buf[0]
	crcPos   int   // buf[:crcPos] is already in crc
	crc      uint64
	eof      bool
	version  int
	entry    Entry
	numSlab  []byte // decimal forms of integers, carved, never rewritten
	seed     maphash.Seed
	keyStart int64 // offset of the current key's type byte, for messages
}

// loadError is an error at a file offset.
type loadError struct {
	off int64
	msg string
}

func (e *loadError) Error() string { return fmt.Sprintf("rdb: offset %d: %s", e.off, e.msg) }

func (d *decoder) offset() int64 { return d.base + int64(d.pos) }

func (d *decoder) errorf(off int64, format string, args ...any) error {
	return &loadError{off: off, msg: fmt.Sprintf(format, args...)}
}

// fill makes at least need (small) bytes available in buf[pos:end].
func (d *decoder) fill(need int) error {
	if d.end-d.pos >= need {
		return nil
	}
	d.crc = crc64Update(d.crc, d.buf[d.crcPos:d.pos])
	copy(d.buf, d.buf[d.pos:d.end])
	d.base += int64(d.pos)
	d.end -= d.pos
	d.pos, d.crcPos = 0, 0
	for zeroReads := 0; d.end < need && !d.eof; {
		n, err := d.r.Read(d.buf[d.end:])
		d.end += n
		switch {
		case err == io.EOF:
			d.eof = true
		case err != nil:
			return d.errorf(d.base+int64(d.end), "read error: %v", err)
		case n == 0:
			if zeroReads++; zeroReads > 100 {
				return d.errorf(d.base+int64(d.end), "read error: %v", io.ErrNoProgress)
			}
		}
	}
	if d.end < need {
		return d.errorf(d.base+int64(d.end), "unexpected end of file")
	}
	return nil
}

func (d *decoder) readByte() (byte, error) {
	if d.pos == d.end {
		if err := d.fill(1); err != nil {
			return 0, err
		}
	}
	c := d.buf[d.pos]
	d.pos++
	return c, nil
}

// readFixed returns the next n (at most a few dozen) bytes, valid until the
// next read.
func (d *decoder) readFixed(n int) ([]byte, error) {
	if err := d.fill(n); err != nil {
		return nil, err
	}
	b := d.buf[d.pos : d.pos+n]
	d.pos += n
	return b, nil
}

// readBytes returns the next n bytes in a fresh slice. The allocation grows
// with the bytes that really arrive, so a corrupt length cannot make it
// allocate more than about twice what the file holds.
func (d *decoder) readBytes(n uint64) ([]byte, error) {
	if avail := uint64(d.end - d.pos); n <= avail {
		out := make([]byte, n)
		d.pos += copy(out, d.buf[d.pos:])
		return out, nil
	}
	if n > math.MaxInt32*2 {
		return nil, d.errorf(d.offset(), "string length %d is too large", n)
	}
	out := make([]byte, 0, min(n, 64<<10))
	for uint64(len(out)) < n {
		if d.pos == d.end {
			if err := d.fill(1); err != nil {
				return nil, err
			}
		}
		take := min(n-uint64(len(out)), uint64(d.end-d.pos))
		out = append(out, d.buf[d.pos:d.pos+int(take)]...)
		d.pos += int(take)
	}
	return out, nil
}

// readLen reads an RDB length (rdbLoadLenByRef). When encoded is true the
// value is a string encoding (encInt8 ... encLZF), not a length.
func (d *decoder) readLen() (n uint64, encoded bool, err error) {
	c, err := d.readByte()
	if err != nil {
		return 0, false, err
	}
	switch c >> 6 {
	case len6Bit:
		return uint64(c & 0x3F), false, nil
	case len14Bit:
		c2, err := d.readByte()
		if err != nil {
			return 0, false, err
		}
		return uint64(c&0x3F)<<8 | uint64(c2), false, nil
	case lenEnc:
		return uint64(c & 0x3F), true, nil
	}
	switch c {
	case len32:
		b, err := d.readFixed(4)
		if err != nil {
			return 0, false, err
		}
		return uint64(binary.BigEndian.Uint32(b)), false, nil
	case len64:
		b, err := d.readFixed(8)
		if err != nil {
			return 0, false, err
		}
		return binary.BigEndian.Uint64(b), false, nil
	}
	return 0, false, d.errorf(d.offset()-1, "unknown length encoding 0x%02x", c)
}

// readCount reads a length that must not be a string encoding.
func (d *decoder) readCount() (uint64, error) {
	off := d.offset()
	n, enc, err := d.readLen()
	if err != nil {
		return 0, err
	}
	if enc {
		return 0, d.errorf(off, "expected a length, found string encoding %d", n)
	}
	return n, nil
}

// maxElements bounds a collection's element count: each element takes at
// least one byte, and no file holds a terabyte of them.
const maxElements = 1 << 40

// readElemCount reads the element count of a collection.
func (d *decoder) readElemCount() (uint64, error) {
	off := d.offset()
	n, err := d.readCount()
	if err == nil && n >= maxElements {
		err = d.errorf(off, "element count %d is impossible", n)
	}
	return n, err
}

// readString reads an RDB string (rdbGenericLoadStringObject) into a fresh
// slice: raw, integer-encoded (returned in decimal) or LZF-compressed.
func (d *decoder) readString() ([]byte, error) {
	off := d.offset()
	n, enc, err := d.readLen()
	if err != nil {
		return nil, err
	}
	if !enc {
		return d.readBytes(n)
	}
	switch n {
	case encInt8:
		b, err := d.readFixed(1)
		if err != nil {
			return nil, err
		}
		return d.decimal(int64(int8(b[0]))), nil
	case encInt16:
		b, err := d.readFixed(2)
		if err != nil {
			return nil, err
		}
		return d.decimal(int64(int16(binary.LittleEndian.Uint16(b)))), nil
	case encInt32:
		b, err := d.readFixed(4)
		if err != nil {
			return nil, err
		}
		return d.decimal(int64(int32(binary.LittleEndian.Uint32(b)))), nil
	case encLZF:
		clen, err := d.readCount()
		if err != nil {
			return nil, err
		}
		ulen, err := d.readCount()
		if err != nil {
			return nil, err
		}
		// Read the compressed bytes before allocating for the result:
		// they bound what the announced length may honestly be.
		in, err := d.readBytes(clen)
		if err != nil {
			return nil, err
		}
		if clen == 0 || ulen > clen*lzfMaxRatio {
			return nil, d.errorf(off, "invalid LZF compressed string: %d bytes cannot expand to %d", clen, ulen)
		}
		out := make([]byte, ulen)
		if err := lzfDecompress(in, out); err != nil {
			return nil, d.errorf(off, "invalid LZF compressed string: %v", err)
		}
		return out, nil
	}
	return nil, d.errorf(off, "unknown string encoding %d", n)
}

// readDoubleString reads a double in the old string form (rdbLoadDoubleValue):
// a length byte (253 NaN, 254 +inf, 255 -inf) then that many ASCII bytes.
func (d *decoder) readDoubleString() (float64, error) {
	off := d.offset()
	c, err := d.readByte()
	if err != nil {
		return 0, err
	}
	switch c {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	b, err := d.readFixed(int(c))
	if err != nil {
		return 0, err
	}
	f, perr := strconv.ParseFloat(string(b), 64)
	if perr != nil {
		return 0, d.errorf(off, "invalid double %q", b)
	}
	return f, nil
}

func (d *decoder) readBinaryDouble() (float64, error) {
	b, err := d.readFixed(8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

func (d *decoder) readMillis() (int64, error) {
	b, err := d.readFixed(8)
	if err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(b)), nil
}

// decimal returns v's decimal form, carved from a slab that is never
// rewritten, so that many small integers cost few allocations.
func (d *decoder) decimal(v int64) []byte {
	if cap(d.numSlab)-len(d.numSlab) < 20 {
		d.numSlab = make([]byte, 0, 4096)
	}
	start := len(d.numSlab)
	d.numSlab = strconv.AppendInt(d.numSlab, v, 10)
	return d.numSlab[start:len(d.numSlab):len(d.numSlab)]
}

// elem turns a listpack/ziplist element into bytes.
func (d *decoder) elem(s []byte, v int64, isInt bool) []byte {
	if isInt {
		return d.decimal(v)
	}
	return s
}

func (d *decoder) load(fn func(e *Entry) error) (Info, error) {
	info := Info{Aux: map[string]string{}}
	d.seed = maphash.MakeSeed()
	magic, err := d.readFixed(9)
	if err != nil {
		return info, err
	}
	if string(magic[:5]) != "REDIS" {
		return info, d.errorf(0, "wrong signature %q, expected \"REDIS\"", magic[:5])
	}
	ver := 0
	for _, c := range magic[5:] {
		if c < '0' || c > '9' {
			return info, d.errorf(5, "can't handle RDB format version %q", magic[5:])
		}
		ver = ver*10 + int(c-'0')
	}
	if ver < 1 || ver > Version {
		return info, d.errorf(5, "can't handle RDB format version %d", ver)
	}
	d.version, info.Version = ver, ver

	db := 0
	var expireAt int64
	for {
		opOff := d.offset()
		op, err := d.readByte()
		if err != nil {
			return info, err
		}
		switch op {
		case opExpireTime:
			b, err := d.readFixed(4)
			if err != nil {
				return info, err
			}
			expireAt = int64(int32(binary.LittleEndian.Uint32(b))) * 1000
			continue
		case opExpireTimeMs:
			if expireAt, err = d.readMillis(); err != nil {
				return info, err
			}
			continue
		case opFreq:
			if _, err := d.readByte(); err != nil {
				return info, err
			}
			continue
		case opIdle:
			if _, err := d.readCount(); err != nil {
				return info, err
			}
			continue
		case opEOF:
			return info, d.checkSum()
		case opSelectDB:
			n, err := d.readCount()
			if err != nil {
				return info, err
			}
			if n > math.MaxInt32 {
				return info, d.errorf(opOff, "database number %d is out of range", n)
			}
			db = int(n)
			continue
		case opResizeDB:
			if _, err := d.readCount(); err != nil {
				return info, err
			}
			if _, err := d.readCount(); err != nil {
				return info, err
			}
			continue
		case opAux:
			k, err := d.readString()
			if err != nil {
				return info, err
			}
			v, err := d.readString()
			if err != nil {
				return info, err
			}
			info.Aux[string(k)] = string(v)
			continue
		case opModuleAux:
			return info, d.errorf(opOff, "MODULE_AUX data (a module's auxiliary data) is not supported")
		case opFunctionPreGA:
			return info, d.errorf(opOff, "Pre-GA function format not supported")
		case opFunction2:
			code, err := d.readString()
			if err != nil {
				return info, err
			}
			info.Functions = append(info.Functions, append([]byte(nil), code...))
			continue
		}
		d.keyStart = opOff
		skipped, err := d.loadKey(op, db, expireAt)
		if err != nil {
			return info, err
		}
		expireAt = 0
		if skipped {
			info.EmptyKeysSkipped++
			continue
		}
		if err := fn(&d.entry); err != nil {
			return info, err
		}
	}
}

// checkSum reads the checksum after the EOF opcode (RDB version 5 and
// later) and compares it with the CRC64 of everything before it; a stored
// zero means the file was written with rdbchecksum no.
func (d *decoder) checkSum() error {
	d.crc = crc64Update(d.crc, d.buf[d.crcPos:d.pos])
	d.crcPos = d.pos
	if d.version < 5 {
		return nil
	}
	off := d.offset()
	b, err := d.readFixed(8)
	if err != nil {
		return err
	}
	got := binary.LittleEndian.Uint64(b)
	if got != 0 && got != d.crc {
		return d.errorf(off, "wrong RDB checksum: file has %016x, content sums to %016x", got, d.crc)
	}
	return nil
}

// loadKey reads one key and its value of type typ into d.entry. skipped
// reports an empty collection, which Redis skips.
func (d *decoder) loadKey(typ byte, db int, expireAt int64) (skipped bool, err error) {
	e := &d.entry
	*e = Entry{DB: db, ExpireAt: expireAt, Type: typ}
	switch typ {
	case typeModulePreGA, typeModule2:
		return false, d.errorf(d.keyStart, "module value type %d: module data is not supported", typ)
	}
	if !knownType(typ) {
		return false, d.errorf(d.keyStart, "unknown value type %d", typ)
	}
	if e.Key, err = d.readString(); err != nil {
		return false, err
	}
	valueOff := d.offset()
	empty, err := d.loadValue(typ)
	if err != nil {
		var le *loadError
		if errors.As(err, &le) {
			le.msg += fmt.Sprintf(" (value of key %q, type %d, at offset %d)", clip(e.Key), typ, valueOff)
		}
		return false, err
	}
	return empty, nil
}

func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

func knownType(t byte) bool {
	switch t {
	case TypeString, TypeList, TypeSet, TypeZSet, TypeHash, TypeZSet2,
		TypeHashZipmap, TypeListZiplist, TypeSetIntset, TypeZSetZiplist,
		TypeHashZiplist, TypeListQuicklist, TypeStreamListpacks,
		TypeHashListpack, TypeZSetListpack, TypeListQuicklist2, TypeStreamListpacks2:
		return true
	}
	return false
}

// capHint bounds a preallocation by a count read from the file.
func capHint(n uint64) int { return int(min(n, 1024)) }

// loadValue reads the value of type typ into d.entry and reports whether
// it was an empty collection.
func (d *decoder) loadValue(typ byte) (empty bool, err error) {
	e := &d.entry
	off := d.offset()
	switch typ {
	case TypeString:
		e.Kind = values.KindString
		e.Str, err = d.readString()
		return false, err

	case TypeList, TypeSet:
		n, err := d.readElemCount()
		if err != nil {
			return false, err
		}
		elems := make([][]byte, 0, capHint(n))
		for i := uint64(0); i < n; i++ {
			s, err := d.readString()
			if err != nil {
				return false, err
			}
			elems = append(elems, s)
		}
		e.Elems = elems
		if typ == TypeList {
			e.Kind = values.KindList
		} else {
			e.Kind = values.KindSet
			if err := d.noDups(off, elems, 1, "set members"); err != nil {
				return false, err
			}
		}
		return len(elems) == 0, nil

	case TypeZSet, TypeZSet2:
		e.Kind = values.KindZSet
		n, err := d.readElemCount()
		if err != nil {
			return false, err
		}
		zs := make([]ZMember, 0, capHint(n))
		for i := uint64(0); i < n; i++ {
			m, err := d.readString()
			if err != nil {
				return false, err
			}
			var score float64
			if typ == TypeZSet2 {
				score, err = d.readBinaryDouble()
			} else {
				score, err = d.readDoubleString()
			}
			if err != nil {
				return false, err
			}
			zs = append(zs, ZMember{Member: m, Score: score})
		}
		e.ZSet = zs
		return len(zs) == 0, d.checkZSet(off)

	case TypeHash:
		e.Kind = values.KindHash
		n, err := d.readElemCount()
		if err != nil {
			return false, err
		}
		pairs := make([][]byte, 0, 2*capHint(n))
		for i := uint64(0); i < 2*n; i++ {
			s, err := d.readString()
			if err != nil {
				return false, err
			}
			pairs = append(pairs, s)
		}
		e.Pairs = pairs
		return len(pairs) == 0, d.noDups(off, pairs, 2, "hash fields")

	case TypeStreamListpacks, TypeStreamListpacks2:
		e.Kind = values.KindStream
		e.Stream, err = d.loadStream(typ)
		return false, err
	}

	// The rest are blobs: one RDB string holding a flat encoding, or (the
	// quicklists) a count of them.
	switch typ {
	case TypeListQuicklist, TypeListQuicklist2:
		e.Kind = values.KindList
		n, err := d.readElemCount()
		if err != nil {
			return false, err
		}
		var elems [][]byte
		for i := uint64(0); i < n; i++ {
			container := uint64(quicklistNodePacked)
			if typ == TypeListQuicklist2 {
				if container, err = d.readCount(); err != nil {
					return false, err
				}
				if container != quicklistNodePlain && container != quicklistNodePacked {
					return false, d.errorf(d.offset(), "quicklist integrity check failed: unknown container %d", container)
				}
			}
			nodeOff := d.offset()
			blob, err := d.readString()
			if err != nil {
				return false, err
			}
			switch {
			case container == quicklistNodePlain:
				elems = append(elems, blob)
			case typ == TypeListQuicklist:
				if elems, err = d.ziplistElems(nodeOff, blob, elems); err != nil {
					return false, err
				}
			default:
				if elems, err = d.listpackElems(nodeOff, blob, elems); err != nil {
					return false, err
				}
			}
		}
		e.Elems = elems
		return len(elems) == 0, nil
	}

	blob, err := d.readString()
	if err != nil {
		return false, err
	}
	switch typ {
	case TypeHashZipmap:
		e.Kind = values.KindHash
		pairs, perr := zipmapPairs(blob)
		if perr != nil {
			return false, d.errorf(off, "zipmap integrity check failed: %v", perr)
		}
		e.Pairs = pairs
		return len(pairs) == 0, d.noDups(off, pairs, 2, "hash fields")

	case TypeListZiplist:
		e.Kind = values.KindList
		e.Elems, err = d.ziplistElems(off, blob, nil)
		return len(e.Elems) == 0, err

	case TypeSetIntset:
		e.Kind = values.KindSet
		width, n, ierr := validateIntset(blob)
		if ierr != nil {
			return false, d.errorf(off, "intset integrity check failed: %v", ierr)
		}
		elems := make([][]byte, n)
		for i := range elems {
			elems[i] = d.decimal(intsetGet(blob, width, i))
		}
		e.Elems = elems
		return n == 0, nil

	case TypeZSetZiplist, TypeHashZiplist:
		flat, err := d.ziplistElems(off, blob, nil)
		if err != nil {
			return false, err
		}
		return d.pairsValue(off, typ == TypeZSetZiplist, flat)

	case TypeHashListpack, TypeZSetListpack:
		flat, err := d.listpackElems(off, blob, nil)
		if err != nil {
			return false, err
		}
		return d.pairsValue(off, typ == TypeZSetListpack, flat)
	}
	return false, d.errorf(d.keyStart, "unknown value type %d", typ)
}

// pairsValue makes a hash or a sorted set of a flat field/value (or
// member/score) list from a ziplist or listpack.
func (d *decoder) pairsValue(off int64, zset bool, flat [][]byte) (bool, error) {
	if len(flat)%2 != 0 {
		return false, d.errorf(off, "odd number of elements (%d) in a pairs encoding", len(flat))
	}
	e := &d.entry
	if !zset {
		e.Kind = values.KindHash
		e.Pairs = flat
		return len(flat) == 0, d.noDups(off, flat, 2, "hash fields")
	}
	e.Kind = values.KindZSet
	zs := make([]ZMember, len(flat)/2)
	for i := range zs {
		score, err := strconv.ParseFloat(string(flat[2*i+1]), 64)
		if err != nil {
			return false, d.errorf(off, "invalid zset score %q", clip(flat[2*i+1]))
		}
		zs[i] = ZMember{Member: flat[2*i], Score: score}
	}
	e.ZSet = zs
	return len(zs) == 0, d.checkZSet(off)
}

func (d *decoder) ziplistElems(off int64, blob []byte, dst [][]byte) ([][]byte, error) {
	n, err := validateZiplist(blob)
	if err != nil {
		return nil, d.errorf(off, "ziplist integrity check failed: %v", err)
	}
	dst = slices.Grow(dst, n)
	for p := zlHeaderSize; blob[p] != zlEnd; {
		s, v, isInt, next := zlNext(blob, p)
		dst = append(dst, d.elem(s, v, isInt))
		p = next
	}
	return dst, nil
}

func (d *decoder) listpackElems(off int64, blob []byte, dst [][]byte) ([][]byte, error) {
	n, err := validateListpack(blob)
	if err != nil {
		return nil, d.errorf(off, "listpack integrity check failed: %v", err)
	}
	dst = slices.Grow(dst, n)
	for p := lpHeaderSize; p < len(blob)-1; {
		s, v, isInt, next := lpNext(blob, p)
		dst = append(dst, d.elem(s, v, isInt))
		p = next
	}
	return dst, nil
}

// checkZSet rejects NaN scores and duplicate members, as Redis does.
func (d *decoder) checkZSet(off int64) error {
	zs := d.entry.ZSet
	for _, m := range zs {
		if math.IsNaN(m.Score) {
			return d.errorf(off, "zset with NAN score detected")
		}
	}
	if len(zs) < 2 {
		return nil
	}
	members := make([][]byte, len(zs))
	for i := range zs {
		members[i] = zs[i].Member
	}
	return d.noDups(off, members, 1, "zset members")
}

// noDups fails when two of elems[0], elems[step], elems[2*step] ... are
// equal. It hashes instead of building a map of strings, so it allocates
// one small map, not one string per element.
func (d *decoder) noDups(off int64, elems [][]byte, step int, what string) error {
	n := (len(elems) + step - 1) / step
	if n < 2 {
		return nil
	}
	if n <= 8 {
		for i := 0; i < len(elems); i += step {
			for j := i + step; j < len(elems); j += step {
				if bytes.Equal(elems[i], elems[j]) {
					return d.errorf(off, "duplicate %s detected: %q", what, clip(elems[i]))
				}
			}
		}
		return nil
	}
	seen := make(map[uint64]int, n)
	var collided map[string]struct{}
	for i := 0; i < len(elems); i += step {
		h := maphash.Bytes(d.seed, elems[i])
		j, ok := seen[h]
		if !ok {
			seen[h] = i
			continue
		}
		if bytes.Equal(elems[j], elems[i]) {
			return d.errorf(off, "duplicate %s detected: %q", what, clip(elems[i]))
		}
		// A 64-bit hash collision between different values: settle
		// those by their bytes.
		if collided == nil {
			collided = map[string]struct{}{}
		}
		for k := 0; k < len(elems); k += step {
			if maphash.Bytes(d.seed, elems[k]) == h {
				if _, dup := collided[string(elems[k])]; dup {
					return d.errorf(off, "duplicate %s detected: %q", what, clip(elems[k]))
				}
				collided[string(elems[k])] = struct{}{}
			}
		}
		clear(collided)
		seen[h] = i
	}
	return nil
}
