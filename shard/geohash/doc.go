// Package geohash owns Redis 7.0's geo arithmetic (src/geohash.c,
// src/geohash_helper.c and the numeric parts of src/geo.c): the 52-bit
// interleaved geohash a GEOADD stores as a sorted set score (longitude in
// [-180, 180], latitude in [-85.05112878, 85.05112878], 26 bits each), its
// decoding to the centre of its cell, the neighbours of a cell, the nine
// cells and the score ranges that cover a search by radius or by box (and
// the spans of those ranges that may hold a member inside it), the
// haversine distance on Redis' earth radius (6372797.560856 m), the
// 11-character GEOHASH string, units, and the number formats Redis replies
// with ("%.4f" distances, "%.17Lf"-trimmed coordinates).
//
// Every operation is Redis' own, in the same order, so coordinates, hashes
// and cells are bit-for-bit Redis'. Distances go through Go's math.Sin, Cos
// and Asin, which may differ from glibc's in the last bit: a distance shown
// with four decimals, or compared with a radius, differs from Redis' only
// when it falls within about 1e-9 m of a rounding or radius boundary.
//
// # What it must never do
//
// Import any package of ours (it is a leaf) or know about sorted sets: the
// keyspace walks the score ranges this package computes.
package geohash
