package acl

import (
	"crypto/rand"
	"encoding/hex"
)

// GenPassMaxBits is GENPASS_MAX_BITS.
const GenPassMaxBits = 4096

// ErrGenPassBits is ACL GENPASS's error for a bad bit count.
const ErrGenPassBits = "ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096"

// GenPass is ACL GENPASS: bits random bits as (bits+3)/4 hex characters,
// from the operating system's CSPRNG; ok is false when bits is not in
// 1..4096.
func GenPass(bits int64) (string, bool) {
	if bits <= 0 || bits > GenPassMaxBits {
		return "", false
	}
	chars := (bits + 3) / 4
	buf := make([]byte, (chars+1)/2)
	if _, err := rand.Read(buf); err != nil {
		panic("acl: no randomness: " + err.Error())
	}
	return hex.EncodeToString(buf)[:chars], true
}
