package resp

import (
	"bytes"
	"math"
	"slices"
	"strconv"
)

// Default limits, the same values Redis 7.0 uses.
const (
	// DefaultMaxBulkLen is proto-max-bulk-len: the largest bulk argument.
	DefaultMaxBulkLen int64 = 512 << 20
	// DefaultMaxInlineLen is PROTO_INLINE_MAX_SIZE: the longest inline
	// command line, and the longest "*<count>" or "$<len>" header line, that
	// may be buffered without its terminator.
	DefaultMaxInlineLen = 64 << 10
	// DefaultMaxArgs is the largest multibulk count Redis 7.0 accepts
	// (INT_MAX).
	DefaultMaxArgs = math.MaxInt32

	// UnauthMaxArgs and UnauthMaxBulkLen are what Redis 7.0 accepts from a
	// client that has not authenticated (processMultibulkBuffer: "ll > 10"
	// and "ll > 16384" when authRequired(c)). See Limits.Unauthenticated.
	UnauthMaxArgs    = 10
	UnauthMaxBulkLen = 16384
)

// Limits bounds what a client may send. Zero (or negative) fields mean the
// Redis default. The parser checks every client-supplied count and length
// against these before it uses the number for anything.
//
// Limits does not bound the total size of a command: a multibulk command may
// be up to MaxArgs arguments of up to MaxBulkLen bytes each. The caller owns
// the read buffer and must cap it (Redis' client-query-buffer-limit); Need
// tells it how large the buffer has to grow for the pending bulk.
type Limits struct {
	// MaxBulkLen is the largest accepted bulk length in bytes
	// (proto-max-bulk-len). Default DefaultMaxBulkLen (512 MiB).
	MaxBulkLen int64
	// MaxInlineLen is the longest inline command line, counted up to its
	// LF (a CR before the LF counts), and the longest multibulk count or
	// bulk length header line, counted up to its CR, "*" or "$" included
	// (PROTO_INLINE_MAX_SIZE). Default DefaultMaxInlineLen (64 KiB).
	MaxInlineLen int
	// MaxArgs is the largest accepted multibulk count. It does not apply to
	// inline commands, whose size MaxInlineLen already bounds (as in Redis).
	// Default DefaultMaxArgs (math.MaxInt32).
	MaxArgs int
	// Unauthenticated applies Redis 7.0's limits for a client that has not
	// authenticated, after the ones above: a multibulk count above
	// UnauthMaxArgs or a bulk length above UnauthMaxBulkLen is refused
	// with its own text ("unauthenticated multibulk length" / "bulk
	// length"). Inline commands are not affected (MaxInlineLen bounds them),
	// as in Redis. The caller sets it while the client must authenticate.
	Unauthenticated bool
}

func (l *Limits) maxBulkLen() int64 {
	if l.MaxBulkLen <= 0 {
		return DefaultMaxBulkLen
	}
	return l.MaxBulkLen
}

func (l *Limits) maxInlineLen() int {
	if l.MaxInlineLen <= 0 {
		return DefaultMaxInlineLen
	}
	return l.MaxInlineLen
}

func (l *Limits) maxArgs() int {
	if l.MaxArgs <= 0 {
		return DefaultMaxArgs
	}
	return l.MaxArgs
}

// Protocol error texts, byte for byte as Redis 7.0 replies them after "-ERR ".
const (
	msgTooBigMbulk      = "Protocol error: too big mbulk count string"
	msgInvalidMbulk     = "Protocol error: invalid multibulk length"
	msgTooBigBulk       = "Protocol error: too big bulk count string"
	msgInvalidBulk      = "Protocol error: invalid bulk length"
	msgTooBigInline     = "Protocol error: too big inline request"
	msgUnbalancedQuotes = "Protocol error: unbalanced quotes in request"
	msgExpectedDollar   = "Protocol error: expected '$', got '"
	msgUnauthMbulk      = "Protocol error: unauthenticated multibulk length"
	msgUnauthBulk       = "Protocol error: unauthenticated bulk length"
)

// ProtocolError is returned by Parser.Parse for input Redis would reject.
// The connection cannot be resynchronised afterwards: reply with AppendReply
// and close it, as Redis does (CLIENT_CLOSE_AFTER_REPLY).
type ProtocolError struct {
	// Msg is the reply text without the leading "-ERR ", byte for byte as
	// Redis 7.0 sends it, e.g. "Protocol error: invalid bulk length".
	Msg string
	// Offset is where, in the buffer given to Parse, the offending line starts.
	Offset int
	// Snippet is a Go-quoted copy of up to snippetLen input bytes from
	// Offset, for logs (like nats' protoSnippet). It is a copy, so it stays
	// valid after the read buffer is reused.
	Snippet string
}

// Error returns Msg.
func (e *ProtocolError) Error() string { return e.Msg }

// AppendReply appends the error reply Redis sends for e ("-ERR <Msg>\r\n").
func (e *ProtocolError) AppendReply(dst []byte) []byte {
	dst = append(dst, "-ERR "...)
	dst = appendNoCRLF(dst, e.Msg)
	return append(dst, '\r', '\n')
}

// snippetLen bounds ProtocolError.Snippet.
const snippetLen = 32

func protoErr(msg string, buf []byte, off int) *ProtocolError {
	end := min(off+snippetLen, len(buf))
	return &ProtocolError{Msg: msg, Offset: off, Snippet: strconv.Quote(string(buf[off:end]))}
}

// parser states. stStart means no byte of the current command is known.
const (
	stStart      = iota
	stInline     // looking for '\n' ending the inline line that starts at 0
	stCount      // looking for '\r' ending "*<count>" that starts at 0
	stBulkHeader // looking for '\r' ending "$<len>" that starts at pos
	stBulkBody   // waiting for bulk bytes [pos, pos+bulk) plus two
)

// maxSpans is the most arguments of one command recorded as spans while
// it arrives. The arguments of a longer command past maxSpans are found
// again, once it is complete, by a second pass over their header lines
// (rescan), which the first pass already checked: a 2M-argument command
// then costs its argument slice (24 B per argument, which the API needs)
// and not also 16 B of spans per argument, 32 with the spans' outgrown
// copies (64 MB, and the copying, for 2M arguments).
const maxSpans = 1 << 12

// maxPresize caps the initial argument capacity for a multibulk command, so
// a client announcing 2^31 arguments costs nothing until it sends them
// (Redis: argv_len = min(multibulklen, 1024)).
const maxPresize = 1024

// span is an argument as offsets into the command's buffer. Offsets, not
// slices, because a resumed Parse may be given a reallocated buffer.
type span struct{ start, end int }

// Parser parses client requests, RESP2 multibulk or inline, from a buffer
// the caller owns. It is a resumable state machine: when the buffer ends in
// the middle of a command it remembers how far it got and continues from
// there on the next call, jumping over bulk payloads whose length it knows.
//
// A Parser belongs to one connection and is not safe for concurrent use. It
// must not be copied after first use. The zero value is ready to use with
// the default Limits.
type Parser struct {
	noCopy noCopy //nolint:unused // go vet copylocks guard

	// Limits bounds what the client may send. It may be changed between
	// commands (e.g. after AUTH); changing it in the middle of a command
	// applies to the rest of that command.
	Limits Limits

	state  uint8
	pos    int // stBulkHeader: header start; stBulkBody: payload start
	scan   int // line states: terminator search resumes here (>= line start)
	left   int // bulks still to read
	bulk   int // stBulkBody: payload length
	argLen int // total length of the arguments read so far
	read   int // arguments read so far (multibulk)
	end    int // offset just past the last argument read (and its CRLF)

	spans   []span // the first maxSpans of the arguments read so far
	scratch []byte // unescaped inline arguments
}

// Reset forgets any partially parsed command. Call it when the connection's
// buffer is discarded or the Parser is reused for another connection.
func (p *Parser) Reset() {
	p.state, p.pos, p.scan, p.left, p.bulk, p.argLen = stStart, 0, 0, 0, 0, 0
	p.read, p.end = 0, 0
	p.spans = p.spans[:0]
}

// Partial reports whether Parse stopped inside a command: the buffer it
// was last given ended before the command did.
func (p *Parser) Partial() bool { return p.state != stStart }

// PendingArgBytes is the total length of the arguments of the pending
// multibulk command read so far (Redis' argv_len_sum, CLIENT LIST
// argv-mem); 0 between commands.
func (p *Parser) PendingArgBytes() int { return p.argLen }

// Progress describes a multibulk command still arriving: read arguments
// are complete and end at offset end of its buffer, left are announced and
// still to come. It is 0, 0, 0 between commands and in an inline command.
// A caller buffering a command of many arguments can size its buffer from
// it (end/read bytes per argument so far, times read+left) instead of
// growing it step by step.
func (p *Parser) Progress() (read, left, end int) {
	if p.state != stBulkHeader && p.state != stBulkBody {
		return 0, 0, 0
	}
	return p.read, p.left, p.end
}

// Need reports how many bytes, counted from the start of the pending
// command, must be in the buffer before Parse can make progress, or 0 when
// that is not known (the parser is looking for the end of a line). After
// Parse returns incomplete while reading a bulk payload, Need is the end of
// that payload plus its CRLF, so the caller can grow its buffer once.
// Need is never more than the length of the buffer Parse last saw plus
// Limits.MaxBulkLen+2; the caller must still check it against its own cap
// on buffered input before growing a buffer to that size.
func (p *Parser) Need() int {
	if p.state != stBulkBody {
		return 0
	}
	if p.bulk > math.MaxInt-2-p.pos {
		return math.MaxInt
	}
	return p.pos + p.bulk + 2
}

// Parse parses one command from the front of buf.
//
// On a complete command it returns its arguments appended to argsbuf[:0]
// and n, the number of bytes it used. An empty command (an empty or blank
// inline line, "*0\r\n", "*-1\r\n") is returned with len(args) == 0 and
// n > 0: skip it, as Redis does.
//
// If buf holds only part of a command, Parse returns nil, 0, nil. Call it
// again when more bytes have arrived, with a buffer that starts with the
// same bytes (the same command start; it may have been reallocated): the
// parser resumes where it stopped instead of scanning again. Passing a
// buffer shorter than the one before, other than after a complete command,
// an error or Reset, makes the parser start over from the first byte.
//
// On input Redis would reject it returns a *ProtocolError; the connection
// must then be closed. The parser is reset.
//
// The arguments alias buf, or the parser's scratch buffer for inline
// arguments written with quotes or escapes. They are valid until the next
// call to Parse or Reset, and only while buf is not modified; copy what must
// live longer. Each argument's capacity equals its length, so appending to
// one cannot overwrite its neighbours.
func (p *Parser) Parse(buf []byte, argsbuf [][]byte) (args [][]byte, n int, err error) {
	if p.state != stStart && (p.scan > len(buf) || p.pos > len(buf)) {
		p.Reset() // not the buffer we saw before; start over
	}
	if len(buf) == 0 {
		return nil, 0, nil
	}
	if p.state == stStart {
		if buf[0] == '*' {
			if args, n, ok := p.parseWhole(buf, argsbuf); ok {
				return args, n, nil
			}
			p.state, p.scan = stCount, 1
		} else {
			p.state, p.scan = stInline, 0
		}
	}
	if p.state == stInline {
		return p.parseInline(buf, argsbuf)
	}
	return p.parseMultibulk(buf, argsbuf)
}

// fail resets the parser and returns a protocol error for the line at off.
func (p *Parser) fail(msg string, buf []byte, off int) ([][]byte, int, error) {
	p.Reset()
	return nil, 0, protoErr(msg, buf, off)
}

// finish resets the parser after a complete command.
func (p *Parser) finish() {
	p.Reset()
}

// findCR looks for the '\r' ending the header line that starts at start,
// resuming the search at p.scan. It returns the index of '\r' when it and
// the byte after it are in buf, -1 when more input is needed, or -2 when
// more than max bytes precede it (Redis: the line is longer than
// PROTO_INLINE_MAX_SIZE and still has no '\r').
//
// Redis skips the byte after '\r' without looking at it; so do we.
//
// Redis applies the length check only when a read ends before the '\r',
// so whether a long header line is "too big" or "invalid" depends on how
// the bytes arrived. Here it depends only on the bytes: a header line of
// more than max bytes is always too big. Either way it is rejected.
func (p *Parser) findCR(buf []byte, start, max int) int {
	limit := len(buf)
	if limit-start > max {
		limit = start + max + 1
	}
	// from > limit if Limits.MaxInlineLen was lowered since the last call:
	// there is no '\r' before from, so none in the window either.
	from := min(p.scan, limit)
	if i := bytes.IndexByte(buf[from:limit], '\r'); i >= 0 {
		cr := from + i
		if cr+1 < len(buf) {
			return cr
		}
		p.scan = cr
		return -1
	}
	if limit-start > max {
		return -2
	}
	p.scan = limit
	return -1
}

// shortHeader is the fast path for the common header line: a prefix byte,
// one to 17 digits without a leading zero, '\r', and at least one more
// byte, all within max bytes. It returns the number and the index of '\r',
// or cr < 0 when the line is anything else; the general path (findCR and
// parseInt) then decides, so the fast path changes no outcome.
func shortHeader(buf []byte, start, max int) (n int64, cr int) {
	i := start + 1
	// One or two digits (GET's headers, most of them), without the loop:
	// the same checks, unrolled.
	if i+2 < len(buf) {
		if d0 := buf[i] - '0'; d0-1 < 9 { // '1'..'9' (d0-1 wraps for '0')
			if buf[i+1] == '\r' && 2 <= max {
				return int64(d0), i + 1
			}
			if d1 := buf[i+1] - '0'; d1 < 10 && i+3 < len(buf) && buf[i+2] == '\r' && 3 <= max {
				return int64(d0)*10 + int64(d1), i + 2
			}
		}
	}
	if i >= len(buf) || buf[i] < '1' || buf[i] > '9' {
		return 0, -1
	}
	end := min(len(buf)-1, start+19) // room for the byte after '\r'
	for ; i < end; i++ {
		c := buf[i]
		if c == '\r' {
			if i-start > max {
				return 0, -1
			}
			return n, i
		}
		if c < '0' || c > '9' {
			return 0, -1
		}
		n = n*10 + int64(c-'0')
	}
	return 0, -1
}

// parseWhole is the fast path for a multibulk command that buf holds
// whole, with header lines shortHeader reads, every count and length within
// the limits, and room in argsbuf for its arguments: the arguments go
// straight into argsbuf, with no state kept and no spans copied. On
// anything else it reports false having changed nothing, and the state
// machine (parseMultibulk) parses the command from its first byte, so the
// fast path changes no outcome: it succeeds only where parseMultibulk,
// making the same checks in the same order, returns the same arguments
// and length. It cut a pipelined GET's instructions by about 130 of 2,200
// (docs/performance.md, "GET's last percent"); FuzzParseWhole compares it
// with the state machine.
func (p *Parser) parseWhole(buf []byte, argsbuf [][]byte) ([][]byte, int, bool) {
	maxInline := p.Limits.maxInlineLen()
	count, cr := shortHeader(buf, 0, maxInline)
	if cr < 0 || count > int64(cap(argsbuf)) || count > int64(p.Limits.maxArgs()) ||
		p.Limits.Unauthenticated && count > UnauthMaxArgs {
		return nil, 0, false
	}
	maxBulk := p.Limits.maxBulkLen()
	if p.Limits.Unauthenticated {
		maxBulk = min(maxBulk, UnauthMaxBulkLen)
	}
	args := argsbuf[:0]
	pos := cr + 2
	for range count {
		if pos >= len(buf) || buf[pos] != '$' {
			return nil, 0, false
		}
		n, cr := shortHeader(buf, pos, maxInline)
		if cr < 0 || n > maxBulk {
			return nil, 0, false
		}
		start := cr + 2
		if len(buf)-start-2 < int(n) {
			return nil, 0, false
		}
		end := start + int(n)
		args = append(args, buf[start:end:end])
		pos = end + 2
	}
	return args, pos, true
}

func (p *Parser) parseMultibulk(buf []byte, argsbuf [][]byte) ([][]byte, int, error) {
	maxInline := p.Limits.maxInlineLen()
	for {
		switch p.state {
		case stCount:
			ll, cr := shortHeader(buf, 0, maxInline)
			if cr < 0 {
				cr = p.findCR(buf, 0, maxInline)
				if cr < 0 {
					if cr == -2 {
						return p.fail(msgTooBigMbulk, buf, 0)
					}
					return nil, 0, nil
				}
				var ok bool
				if ll, ok = ParseInt(buf[1:cr]); !ok {
					return p.fail(msgInvalidMbulk, buf, 0)
				}
			}
			if ll > int64(p.Limits.maxArgs()) {
				return p.fail(msgInvalidMbulk, buf, 0)
			}
			if ll > UnauthMaxArgs && p.Limits.Unauthenticated {
				return p.fail(msgUnauthMbulk, buf, 0)
			}
			if ll <= 0 {
				p.finish()
				return argsbuf[:0], cr + 2, nil
			}
			p.left, p.end = int(ll), cr+2
			p.spans = p.spans[:0]
			if want := min(p.left, maxPresize); cap(p.spans) < want {
				p.spans = make([]span, 0, want)
			}
			p.pos, p.scan, p.state = cr+2, cr+2, stBulkHeader

		case stBulkHeader:
			ll, cr := int64(0), -1
			if p.pos < len(buf) && buf[p.pos] == '$' {
				ll, cr = shortHeader(buf, p.pos, maxInline)
			}
			if cr < 0 {
				cr = p.findCR(buf, p.pos, maxInline)
				if cr < 0 {
					if cr == -2 {
						return p.fail(msgTooBigBulk, buf, p.pos)
					}
					return nil, 0, nil
				}
				if c := buf[p.pos]; c != '$' {
					return p.fail(expectedDollar(c), buf, p.pos)
				}
				var ok bool
				if ll, ok = ParseInt(buf[p.pos+1 : cr]); !ok {
					return p.fail(msgInvalidBulk, buf, p.pos)
				}
			}
			if ll < 0 || ll > p.Limits.maxBulkLen() || ll > math.MaxInt-2 {
				return p.fail(msgInvalidBulk, buf, p.pos)
			}
			if ll > UnauthMaxBulkLen && p.Limits.Unauthenticated {
				return p.fail(msgUnauthBulk, buf, p.pos)
			}
			p.bulk, p.pos, p.state = int(ll), cr+2, stBulkBody

		case stBulkBody:
			// Jump over the payload: its length is known, never scan it.
			// Written as a subtraction so a huge bulk cannot overflow.
			if len(buf)-p.pos-2 < p.bulk {
				return nil, 0, nil
			}
			end := p.pos + p.bulk
			if len(p.spans) < maxSpans {
				if len(p.spans) == cap(p.spans) {
					// Double, never past what was announced nor maxSpans.
					p.spans = slices.Grow(p.spans, min(p.left, max(len(p.spans), maxPresize), maxSpans-len(p.spans)))
				}
				p.spans = append(p.spans, span{p.pos, end})
			}
			p.read++
			p.end = end + 2
			p.argLen += p.bulk
			// Like Redis, the two bytes after the payload are skipped
			// unchecked ("\r\n" by protocol).
			p.pos = end + 2
			p.left--
			if p.left > 0 {
				p.scan, p.state = p.pos, stBulkHeader
				continue
			}
			args := argsbuf[:0]
			if cap(args) < p.read {
				args = make([][]byte, 0, p.read) // one allocation, not a growth per doubling
			}
			for _, s := range p.spans {
				args = append(args, buf[s.start:s.end:s.end])
			}
			if rest := p.read - len(p.spans); rest > 0 {
				args = rescan(args, buf, p.spans[len(p.spans)-1].end+2, rest)
			}
			n := p.pos
			p.finish()
			return args, n, nil

		default:
			// Unreachable; keeps a corrupted state from looping forever.
			p.Reset()
			return nil, 0, nil
		}
	}
}

// rescan appends the n arguments whose header lines start at buf[pos:], a
// run of bulks the parser has already read and checked (past maxSpans): a
// header ends at its first '\r', the byte after it is skipped, and so are
// the two after the payload, exactly as parseMultibulk read them.
func rescan(args [][]byte, buf []byte, pos, n int) [][]byte {
	for range n {
		ll, cr := shortHeader(buf, pos, math.MaxInt)
		if cr < 0 {
			cr = pos + 1 + bytes.IndexByte(buf[pos+1:], '\r')
			ll, _ = ParseInt(buf[pos+1 : cr])
		}
		start := cr + 2
		end := start + int(ll)
		args = append(args, buf[start:end:end])
		pos = end + 2
	}
	return args
}

// expectedDollar is Redis' "expected '$', got '%c'" text. Like Redis'
// addReplyErrorFormat it turns CR and LF into spaces; any other byte,
// NUL included, is echoed raw.
func expectedDollar(c byte) string {
	if c == '\r' || c == '\n' {
		c = ' '
	}
	return msgExpectedDollar + string([]byte{c}) + "'"
}

func (p *Parser) parseInline(buf []byte, argsbuf [][]byte) ([][]byte, int, error) {
	maxInline := p.Limits.maxInlineLen()
	limit := len(buf)
	if limit > maxInline {
		limit = maxInline + 1
	}
	from := min(p.scan, limit) // see findCR
	i := bytes.IndexByte(buf[from:limit], '\n')
	if i < 0 {
		// Deterministic where Redis depends on read boundaries; see findCR.
		if limit > maxInline {
			return p.fail(msgTooBigInline, buf, 0)
		}
		p.scan = limit
		return nil, 0, nil
	}
	nl := from + i
	end := nl
	if end > 0 && buf[end-1] == '\r' {
		end--
	}
	args, ok := p.splitInline(buf[:end], argsbuf[:0])
	if !ok {
		return p.fail(msgUnbalancedQuotes, buf, 0)
	}
	p.finish()
	return args, nl + 1, nil
}

// isSpace is C isspace() in the C locale, which sdssplitargs uses to skip
// blanks between arguments and to accept what follows a closing quote.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// isArgEnd reports the bytes that end an unquoted argument in sdssplitargs.
// Note '\v' and '\f' are not among them, although isSpace skips them.
func isArgEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// SplitArgs splits line into arguments as Redis' sdssplitargs does, by the
// rules of inline commands (see splitInline), for the other Redis text
// formats that use it (the append-only file's manifest). It reports false
// for unbalanced quotes. Unquoted arguments alias line.
func SplitArgs(line []byte) ([][]byte, bool) {
	var p Parser
	return p.splitInline(line, nil)
}

// splitInline splits an inline command line as Redis' sdssplitargs does,
// appending the arguments to args. It reports false for unbalanced quotes.
//
// Arguments without quotes alias line; the others are unescaped into
// p.scratch, which is sized to len(line) first (unescaping never grows the
// text) so it is not reallocated while arguments point into it.
//
// One deliberate difference: sdssplitargs works on C strings and stops at
// a NUL byte (and Redis' strchr never finds a '\n' after one). Here NUL is
// an ordinary byte.
func (p *Parser) splitInline(line []byte, args [][]byte) ([][]byte, bool) {
	if cap(p.scratch) < len(line) {
		p.scratch = make([]byte, 0, len(line))
	}
	// sc never outgrows p.scratch (see above), so p.scratch need not be
	// updated from it.
	sc := p.scratch[:0]

	n := len(line)
	i := 0
	for {
		for i < n && isSpace(line[i]) {
			i++
		}
		if i == n {
			return args, true
		}
		start := i
		for i < n && !isArgEnd(line[i]) && line[i] != '"' && line[i] != '\'' {
			i++
		}
		if i == n || isArgEnd(line[i]) {
			args = append(args, line[start:i:i])
			continue // the blank loop skips the terminator
		}

		// The argument has quotes: unescape it into scratch.
		from := len(sc)
		sc = append(sc, line[start:i]...)
		inq, insq := false, false
	token:
		for i < n {
			c := line[i]
			switch {
			case inq:
				switch {
				case c == '\\' && i+3 < n && line[i+1] == 'x' && isHexDigit(line[i+2]) && isHexDigit(line[i+3]):
					sc = append(sc, hexVal(line[i+2])<<4|hexVal(line[i+3]))
					i += 4
				case c == '\\' && i+1 < n:
					switch e := line[i+1]; e {
					case 'n':
						sc = append(sc, '\n')
					case 'r':
						sc = append(sc, '\r')
					case 't':
						sc = append(sc, '\t')
					case 'b':
						sc = append(sc, '\b')
					case 'a':
						sc = append(sc, '\a')
					default:
						sc = append(sc, e)
					}
					i += 2
				case c == '"':
					// The closing quote must be followed by a space or
					// nothing at all.
					if i+1 < n && !isSpace(line[i+1]) {
						return nil, false
					}
					inq = false
					i++
					break token
				default:
					sc = append(sc, c)
					i++
				}
			case insq:
				switch {
				case c == '\\' && i+1 < n && line[i+1] == '\'':
					sc = append(sc, '\'')
					i += 2
				case c == '\'':
					if i+1 < n && !isSpace(line[i+1]) {
						return nil, false
					}
					insq = false
					i++
					break token
				default:
					sc = append(sc, c)
					i++
				}
			default:
				switch c {
				case ' ', '\t', '\n', '\r':
					i++
					break token
				case '"':
					inq = true
				case '\'':
					insq = true
				default:
					sc = append(sc, c)
				}
				i++
			}
		}
		if inq || insq {
			return nil, false // unterminated quotes
		}
		args = append(args, sc[from:len(sc):len(sc)])
	}
}
