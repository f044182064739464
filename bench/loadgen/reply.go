package loadgen

import (
	"bytes"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
)

// replyKind is what the load generator needs to know about a reply.
type replyKind uint8

const (
	replyValue replyKind = iota // anything that is neither null nor an error
	replyNull                   // $-1, *-1 or RESP3 _ : a GET miss
	replyError                  // -ERR ... or RESP3 !<len> blob error
)

// scanReply reports the length n of the first complete RESP2/RESP3 reply in
// buf and its kind, without allocating (resp.SkipReply jumps over bulk
// payloads by their declared length). n == 0 with a nil error means the reply
// is incomplete: read more and call again with the same start.
//
// The kind comes from the first byte of the reply proper, after any RESP3
// attributes annotating it.
func scanReply(buf []byte) (n int, kind replyKind, err error) {
	n, err = resp.SkipReply(buf)
	if n <= 0 || err != nil {
		return 0, 0, err
	}
	pos := 0
	for buf[pos] == '|' { // "|<pairs>\r\n" then 2*pairs replies, then the reply
		nl := bytes.IndexByte(buf[pos:], '\n')
		pairs, perr := strconv.Atoi(string(bytes.TrimSuffix(buf[pos+1:pos+nl], []byte("\r"))))
		if perr != nil {
			return 0, 0, resp.ErrMalformedReply
		}
		pos += nl + 1
		for range 2 * pairs {
			m, _ := resp.SkipReply(buf[pos:]) // complete: SkipReply accepted the whole
			pos += m
		}
	}
	switch buf[pos] {
	case '-', '!':
		kind = replyError
	case '_':
		kind = replyNull
	case '$', '*':
		if buf[pos+1] == '-' {
			kind = replyNull
		}
	}
	return n, kind, nil
}
