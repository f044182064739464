package command

import "strconv"

// Private RESP writers. COMMAND replies are cold-path and this package may
// not import core/resp (core packages do not depend on each other), so it
// keeps these few append helpers of its own. They follow the same
// append-to-dst shape as core/resp.

func appendPrefix(dst []byte, c byte, n int) []byte {
	dst = append(dst, c)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, '\r', '\n')
}

func appendArrayHeader(dst []byte, n int) []byte { return appendPrefix(dst, '*', n) }

// appendSetHeader writes a RESP3 set header, or an array header for RESP2
// (Redis' addReplySetLen).
func appendSetHeader(dst []byte, n int, resp3 bool) []byte {
	if resp3 {
		return appendPrefix(dst, '~', n)
	}
	return appendPrefix(dst, '*', n)
}

// appendMapHeader writes a RESP3 map header for n pairs, or a flat RESP2
// array of 2n elements (Redis' addReplyMapLen).
func appendMapHeader(dst []byte, n int, resp3 bool) []byte {
	if resp3 {
		return appendPrefix(dst, '%', n)
	}
	return appendPrefix(dst, '*', 2*n)
}

func appendBulk(dst []byte, s string) []byte {
	dst = appendPrefix(dst, '$', len(s))
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

func appendBulkBytes(dst, b []byte) []byte {
	dst = appendPrefix(dst, '$', len(b))
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// appendSimple writes a status reply; s must not contain CR or LF.
func appendSimple(dst []byte, s string) []byte {
	dst = append(dst, '+')
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

func appendInt(dst []byte, n int) []byte { return appendPrefix(dst, ':', n) }

// appendNull is Redis' addReplyNull: a RESP2 null bulk string or RESP3 null.
func appendNull(dst []byte, resp3 bool) []byte {
	if resp3 {
		return append(dst, '_', '\r', '\n')
	}
	return append(dst, '$', '-', '1', '\r', '\n')
}

// appendError writes "-<msg>\r\n". msg carries its own code ("ERR ...").
func appendError(dst []byte, msg string) []byte {
	dst = append(dst, '-')
	dst = append(dst, msg...)
	return append(dst, '\r', '\n')
}

// appendStatusSet writes names as a set of status replies, the way Redis'
// addReplyCommandFlags does for command, key-spec, argument and doc flags.
func appendStatusSet(dst []byte, names []string, resp3 bool) []byte {
	dst = appendSetHeader(dst, len(names), resp3)
	for _, n := range names {
		dst = appendSimple(dst, n)
	}
	return dst
}
