package aof

import (
	"bufio"
	"encoding/binary"
	"hash/crc64"
	"io"
)

// jonesTable is Redis' CRC-64 (crc-64-jones: polynomial 0xad93d23594c935a9,
// reflected, initial value 0, no final xor), the checksum that ends an RDB
// file. hash/crc64 wants the polynomial bit-reversed.
var jonesTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// redisCRC64 continues Redis' crc64(crc, p). hash/crc64 inverts the value
// before and after; Redis does not, so the inversions are undone here.
func redisCRC64(crc uint64, p []byte) uint64 {
	return ^crc64.Update(^crc, jonesTable, p)
}

// rdbVersion is the RDB format version Redis 7.0 writes ("REDIS0010").
const rdbVersion = "0010"

// EmptyRDB returns the smallest valid RDB file for Redis 7.0: the
// "REDIS0010" header, the EOF opcode and the checksum. It is the base of a
// fresh AOF (Redis writes the empty data set as its first base file on a
// start with no AOF); redis-check-rdb accepts it.
func EmptyRDB() []byte {
	b := append([]byte("REDIS"+rdbVersion), 0xFF)
	return binary.LittleEndian.AppendUint64(b, redisCRC64(0, b))
}

// rdbEnd finds where an RDB read from r ends, for an old-style AOF whose
// RDB preamble is followed by commands: after the first 0xFF (EOF opcode)
// whose next 8 bytes are the little-endian CRC-64 of everything up to and
// including it. It returns -1 when there is none (a truncated preamble, or
// one written with rdbchecksum no). A false match needs a 64-bit checksum
// collision.
func rdbEnd(r io.Reader) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var crc uint64
	var off int64
	for {
		chunk, err := br.ReadSlice(0xFF)
		crc = redisCRC64(crc, chunk)
		off += int64(len(chunk))
		switch err {
		case nil: // chunk ends with 0xFF
			next, _ := br.Peek(8)
			if len(next) < 8 {
				return -1, nil
			}
			if binary.LittleEndian.Uint64(next) == crc {
				return off + 8, nil
			}
		case bufio.ErrBufferFull:
		case io.EOF:
			return -1, nil
		default:
			return -1, err
		}
	}
}
