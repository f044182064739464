package loadgen

import (
	"bytes"
	"errors"
	"fmt"
)

// replyKind is what the load generator needs to know about a reply.
type replyKind uint8

const (
	replyValue replyKind = iota // anything that is neither null nor an error
	replyNull                   // $-1, *-1 or RESP3 _ : a GET miss
	replyError                  // -ERR ... or RESP3 !<len> blob error
)

// Scanner limits: a reply beyond them is a protocol error, not a reason to
// buffer without bound.
const (
	maxReplyLine  = 64 << 10
	maxReplyBulk  = 512 << 20
	maxReplyCount = 1 << 24
)

var errProtocol = errors.New("loadgen: protocol error in reply")

// scanReply reports the length n of the first complete RESP2/RESP3 reply in
// buf and its kind, without allocating or copying: bulk payloads are jumped
// over by their declared length, and nested aggregates are handled with a
// counter of pending elements instead of recursion. n == 0 with a nil error
// means the reply is incomplete: read more and call again with the same
// start. It rescans from the start each time, which is fine for the small
// replies of SET/GET workloads.
//
// This is a private scanner on purpose: github.com/svcdb/svcdb/core/resp is
// to offer SkipReply(buf) (n int, err error) with the same contract, and the
// load generator could use it once it exists, keeping only the kind
// classification here. A separate scanner also means the benchmark does not
// trust the parser it is measuring.
func scanReply(buf []byte) (n int, kind replyKind, err error) {
	pos := 0
	// Attributes (RESP3 |) annotate the reply that follows them: skip them,
	// then classify that reply.
	for pos < len(buf) && buf[pos] == '|' {
		if pos, err = skipAttribute(buf, pos); pos <= 0 || err != nil {
			return 0, 0, err
		}
	}
	end, err := skipElems(buf, pos, 1)
	if end <= 0 || err != nil {
		return 0, 0, err
	}
	switch buf[pos] {
	case '-', '!':
		kind = replyError
	case '_':
		kind = replyNull
	case '$', '*':
		if buf[pos+1] == '-' { // "-1"; skipElems rejected any other negative
			kind = replyNull
		}
	}
	return end, kind, nil
}

// skipAttribute skips the attribute map starting at buf[pos] (not the reply
// it annotates), with skipElems' results.
func skipAttribute(buf []byte, pos int) (int, error) {
	nl := bytes.IndexByte(buf[pos:], '\n')
	if nl < 0 {
		return 0, nil
	}
	eol := pos + nl
	c, ok := parseReplyInt(buf[pos+1 : max(eol-1, pos+1)])
	if nl < 2 || buf[eol-1] != '\r' || !ok || c < 0 || c > maxReplyCount {
		return 0, fmt.Errorf("%w: attribute header %q", errProtocol, buf[pos:eol+1])
	}
	if c == 0 {
		return eol + 1, nil
	}
	return skipElems(buf, eol+1, int(2*c))
}

// skipElems skips count complete RESP elements starting at buf[pos] and
// returns the offset just past them, 0 if they are incomplete, or an error.
// An attribute (|) does not count as an element: it adds its key/value pairs
// and the element it annotates follows.
func skipElems(buf []byte, pos, count int) (int, error) {
	pending := count
	for pending > 0 {
		if pos >= len(buf) {
			return 0, nil
		}
		t := buf[pos]
		nl := bytes.IndexByte(buf[pos+1:], '\n')
		if nl < 0 {
			if len(buf)-pos > maxReplyLine {
				return 0, fmt.Errorf("%w: line longer than %d bytes", errProtocol, maxReplyLine)
			}
			return 0, nil
		}
		eol := pos + 1 + nl // index of '\n'
		if nl == 0 || buf[eol-1] != '\r' {
			return 0, fmt.Errorf("%w: line without CRLF at offset %d", errProtocol, pos)
		}
		line := buf[pos+1 : eol-1]
		next := eol + 1
		switch t {
		case '+', '-', ':', ',', '(', '#', '_':
			pending--
		case '$', '!', '=':
			l, ok := parseReplyInt(line)
			if !ok || l < -1 || l > maxReplyBulk || (l == -1 && t != '$') {
				return 0, fmt.Errorf("%w: bulk length %q", errProtocol, line)
			}
			if l >= 0 {
				end := next + int(l) + 2
				if end > len(buf) {
					return 0, nil
				}
				if buf[end-2] != '\r' || buf[end-1] != '\n' {
					return 0, fmt.Errorf("%w: bulk of %d bytes not followed by CRLF", errProtocol, l)
				}
				next = end
			}
			pending--
		case '*', '~', '>', '%', '|':
			c, ok := parseReplyInt(line)
			if !ok || c < -1 || c > maxReplyCount || (c == -1 && t != '*') {
				return 0, fmt.Errorf("%w: aggregate count %q", errProtocol, line)
			}
			if c > 0 {
				if t == '%' || t == '|' {
					c *= 2
				}
				pending += int(c)
			}
			if t != '|' {
				pending--
			}
		default:
			return 0, fmt.Errorf("%w: unknown type byte %q at offset %d", errProtocol, t, pos)
		}
		pos = next
	}
	return pos, nil
}

// parseReplyInt parses a signed decimal of at most 18 digits.
func parseReplyInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}
