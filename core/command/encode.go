package command

import "github.com/svcdb/svcdb/core/resp"

// appendInt writes an integer reply from an int (the table's counts and
// positions are ints; core/resp takes int64).
func appendInt(dst []byte, n int) []byte { return resp.AppendInt(dst, int64(n)) }

// appendStatusSet writes names as a set of status replies, the way Redis'
// addReplyCommandFlags does for command, key-spec, argument and doc flags.
func appendStatusSet(dst []byte, names []string, resp3 bool) []byte {
	dst = resp.AppendSetHeader(dst, len(names), resp3)
	for _, n := range names {
		dst = resp.AppendSimpleString(dst, n)
	}
	return dst
}
