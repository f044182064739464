package rdb

import "github.com/svcdb/svcdb/shard/lzf"

// LZF compression of strings, as Redis writes them with rdbcompression yes:
// a string longer than 20 bytes is stored compressed when that saves at
// least 4 bytes, as RDB_ENC_LZF: the compressed length, the original length,
// then the LZF stream (package lzf).

// lzfMinInput: Redis compresses strings longer than 20 bytes.
const lzfMinInput = 21

// lzfMaxRatio bounds how much LZF can expand (lzf.MaxRatio).
const lzfMaxRatio = lzf.MaxRatio

// Compressor compresses strings for AppendString. It keeps its hash table
// between calls, so compressing allocates nothing in steady state. A nil
// *Compressor does not compress. Not safe for concurrent use.
type Compressor struct{ c lzf.Compressor }

// NewCompressor returns a Compressor.
func NewCompressor() *Compressor { return &Compressor{} }

// AppendString appends s as AppendString does, LZF-compressed when s is
// longer than 20 bytes and compression saves at least 4 bytes (Redis'
// rdbSaveRawString with rdbcompression yes).
func (c *Compressor) AppendString(dst, s []byte) []byte {
	if c == nil || len(s) < lzfMinInput {
		return AppendString(dst, s)
	}
	z := c.c.Compress(s, len(s)-4)
	if z == nil {
		return AppendString(dst, s)
	}
	dst = append(dst, 0xC0|3) // RDB_ENCVAL<<6 | RDB_ENC_LZF
	dst = AppendLen(dst, uint64(len(z)))
	dst = AppendLen(dst, uint64(len(s)))
	return append(dst, z...)
}

// lzfDecompress is lzf.Decompress.
func lzfDecompress(in, out []byte) error { return lzf.Decompress(in, out) }
