// Package hll owns Redis 7.0's HyperLogLog representation, byte for byte
// (src/hyperloglog.c): the 16-byte header ("HYLL", the encoding byte, three
// unused bytes, the cached cardinality in little endian with its invalid
// bit), the sparse encoding (ZERO, XZERO and VAL opcodes) and the dense one
// (16384 registers of 6 bits, least significant bits first), MurmurHash64A
// with Redis' seed, the promotion from sparse to dense, Otmar Ertl's
// improved estimator, and the raw-register union of PFCOUNT and PFMERGE.
//
// An HLL is a plain byte slice: the keyspace stores it as a string, and RDB
// and DUMP carry it unchanged, so an HLL written by redis-server counts the
// same here and the other way round.
//
// # Invariants
//
//   - A dense HLL is exactly DenseSize bytes; its registers are at
//     [HeaderSize:DenseSize].
//   - A sparse HLL's opcodes cover exactly Registers registers; one that
//     does not is corrupt (ErrCorrupt), found when it is read in full.
//   - Every change to the registers sets the cached cardinality's invalid bit
//     (the most significant bit of byte 15).
//
// # What it must never do
//
// Import any package of ours (it is a leaf), keep state between calls, or
// allocate when adding to a dense HLL (PFADD's steady state).
package hll
