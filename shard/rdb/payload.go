package rdb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
)

// FUNCTION DUMP and RESTORE payloads (functions.c functionsDumpCommand):
// one FUNCTION2 record per library, then the RDB version (2 bytes, little
// endian) and the CRC64 of everything before it (8 bytes, little endian),
// the footer DUMP puts on a key's payload.

// AppendFunctionsPayload appends the DUMP payload of the libraries' codes.
func AppendFunctionsPayload(dst []byte, codes []string) []byte {
	start := len(dst)
	for _, code := range codes {
		dst = AppendFunction(dst, []byte(code))
	}
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	return binary.LittleEndian.AppendUint64(dst, crc64Update(0, dst[start:]))
}

// ErrPayload is verifyDumpPayload's refusal, worded as FUNCTION RESTORE's.
var ErrPayload = errors.New("DUMP payload version or checksum are wrong")

// ParseFunctionsPayload checks a FUNCTION RESTORE payload's footer (RDB
// version at most ours, CRC64) and returns the libraries' codes; other
// errors are functionRestoreCommand's texts.
func ParseFunctionsPayload(p []byte) ([][]byte, error) {
	if len(p) < 10 {
		return nil, ErrPayload
	}
	footer := p[len(p)-10:]
	if int(binary.LittleEndian.Uint16(footer)) > Version {
		return nil, ErrPayload
	}
	if crc64Update(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, ErrPayload
	}
	body := p[:len(p)-10]
	var codes [][]byte
	for len(body) > 0 {
		switch body[0] {
		case opFunctionPreGA:
			return nil, errors.New("Pre-GA function format not supported")
		case opFunction2:
		default:
			return nil, errors.New("given type is not a function")
		}
		d := &decoder{r: bytes.NewReader(body[1:]), buf: make([]byte, 4096)}
		code, err := readPayloadString(d)
		if err != nil {
			return nil, errors.New("failed loading the given functions payload")
		}
		codes = append(codes, append([]byte(nil), code...))
		body = body[1+d.offset():]
	}
	return codes, nil
}

// readPayloadString reads one string, turning a decoder panic (a bug, never
// the input's fault) into an error as Load does.
func readPayloadString(d *decoder) (s []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("rdb: internal error: %v", p)
		}
	}()
	return d.readString()
}

// Key DUMP and RESTORE payloads (cluster.c createDumpPayload and
// verifyDumpPayload): the value's RDB type byte and encoding, exactly as
// it follows the key in a snapshot, then the same footer as above.

// AppendDumpFooter ends the payload that starts at dst[start:] (a type byte
// and a value): the RDB version, then the CRC64 of the payload and version.
func AppendDumpFooter(dst []byte, start int) []byte {
	dst = binary.LittleEndian.AppendUint16(dst, Version)
	return binary.LittleEndian.AppendUint64(dst, crc64Update(0, dst[start:]))
}

// VerifyDumpPayload is Redis' verifyDumpPayload: at least the 10 bytes of
// the footer, an RDB version no newer than ours, and a CRC64 that matches.
// It returns ErrPayload otherwise.
func VerifyDumpPayload(p []byte) error {
	if len(p) < 10 {
		return ErrPayload
	}
	footer := p[len(p)-10:]
	if int(binary.LittleEndian.Uint16(footer)) > Version {
		return ErrPayload
	}
	if crc64Update(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return ErrPayload
	}
	return nil
}

// ErrBadDataFormat is RESTORE's reply to a payload whose footer is right but
// whose value does not decode (restoreCommand's "Bad data format").
var ErrBadDataFormat = errors.New("Bad data format")

// ParseDumpValue decodes the value of a payload VerifyDumpPayload accepted:
// the type byte and the value after it, with every check Load makes (every
// embedded listpack, ziplist, intset and zipmap validated in full, no
// duplicates, no NaN scores, lengths bounded by the bytes present). The
// returned Entry has no Key, DB or ExpireAt; its slices are fresh. An empty
// collection, a module type or anything that does not decode is an error
// wrapping ErrBadDataFormat; bytes after the value and before the footer
// are ignored, as rdbLoadObject ignores them. It never panics.
func ParseDumpValue(p []byte) (e *Entry, err error) {
	if len(p) < 10 {
		return nil, ErrPayload
	}
	body := p[:len(p)-10]
	d := &decoder{r: bytes.NewReader(body), buf: make([]byte, min(len(body)+1, 64<<10)), version: Version}
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("%w: internal error at offset %d: %v", ErrBadDataFormat, d.offset(), r)
		}
	}()
	d.seed = maphash.MakeSeed()
	typ, err := d.readByte()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadDataFormat, err)
	}
	if typ == typeModulePreGA || typ == typeModule2 || !knownType(typ) {
		return nil, fmt.Errorf("%w: value type %d is not supported", ErrBadDataFormat, typ)
	}
	d.entry = Entry{Type: typ}
	empty, err := d.loadValue(typ)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadDataFormat, err)
	}
	if empty {
		return nil, fmt.Errorf("%w: empty collection", ErrBadDataFormat)
	}
	out := d.entry
	return &out, nil
}
