package rdb

import "math/bits"

// crcPoly is Redis' crc64 polynomial (Jones, src/crc64.c), reflected for
// the LSB-first table algorithm: Redis' crc64 reflects input and output,
// starts at 0 and does not invert the result.
var crcPoly = bits.Reverse64(0xad93d23594c935a9)

// crcTable holds slicing-by-8 tables: crcTable[0] is the plain byte table.
var crcTable = func() (t [8][256]uint64) {
	for i := range 256 {
		c := uint64(i)
		for range 8 {
			if c&1 == 1 {
				c = c>>1 ^ crcPoly
			} else {
				c >>= 1
			}
		}
		t[0][i] = c
	}
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < 8; k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// crc64Update continues Redis' crc64 over p: crc64(crc64(0,a),b) == crc64(0,a+b).
func crc64Update(crc uint64, p []byte) uint64 {
	for len(p) >= 8 {
		crc ^= uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
			uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56
		crc = crcTable[7][crc&0xff] ^ crcTable[6][crc>>8&0xff] ^ crcTable[5][crc>>16&0xff] ^
			crcTable[4][crc>>24&0xff] ^ crcTable[3][crc>>32&0xff] ^ crcTable[2][crc>>40&0xff] ^
			crcTable[1][crc>>48&0xff] ^ crcTable[0][crc>>56]
		p = p[8:]
	}
	for _, b := range p {
		crc = crcTable[0][byte(crc)^b] ^ crc>>8
	}
	return crc
}
