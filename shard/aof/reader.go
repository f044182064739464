package aof

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// annotationLineMax is Redis' AOF_ANNOTATION_LINE_MAX_LEN: the buffer its
// loader reads header lines into with fgets, so a line is at most 1023 bytes
// and a longer one is read as several.
const annotationLineMax = 1024

// CommandReader reads the commands of an AOF file as Redis 7.0's
// loadSingleAppendOnlyFile does: lines starting with '#' are annotations
// (#TS:...) and skipped; a command is "*<argc>" then argc times "$<len>",
// len bytes and two bytes that are not checked (normally CRLF); header lines
// end at '\n' and their numbers are read as atoi/strtol read them.
//
// It never sizes anything from a count or a length before checking it
// against the bytes left in the file, so no input makes it allocate more
// than the file holds, and it never panics.
type CommandReader struct {
	r    *bufio.Reader
	size int64 // bytes in the source
	off  int64 // bytes consumed so far
	// Reused between commands: the arguments alias data.
	data  []byte
	spans [][2]int
	args  [][]byte
	lbuf  []byte // the current header line
}

// NewCommandReader reads commands from r, which holds size bytes.
func NewCommandReader(r io.Reader, size int64) *CommandReader {
	// The buffer holds a whole header line (fgets' 1023 bytes), and no
	// more than the input for small inputs.
	return &CommandReader{r: bufio.NewReaderSize(r, int(min(max(size, annotationLineMax), 64<<10))), size: size}
}

// Offset is the number of bytes consumed: after Next returned a command,
// the offset just past it.
func (c *CommandReader) Offset() int64 { return c.off }

// ParseError is input Redis' loader refuses. Truncated input (Redis'
// "unexpected end of file") has Truncated set; anything else is a format
// error ("bad file format").
type ParseError struct {
	Offset    int64  // where the problem is: the start of the bad line, or the end of the input
	Truncated bool   // the input ends inside a command
	Reason    string // what was found, for people
}

func (e *ParseError) Error() string {
	if e.Truncated {
		return fmt.Sprintf("unexpected end of file at offset %d: %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("bad file format at offset %d: %s", e.Offset, e.Reason)
}

// Next returns the next command's arguments, valid until the next call.
// It returns io.EOF at the end of the input between commands, a
// *ParseError for truncated or malformed input, or the reader's error.
func (c *CommandReader) Next() ([][]byte, error) {
	var argc int
	for {
		line, err := c.line()
		if err != nil {
			return nil, err
		}
		if line == nil {
			return nil, io.EOF
		}
		start := c.off
		c.off += int64(len(line))
		if line[0] == '#' {
			continue // annotation
		}
		if line[0] != '*' {
			return nil, &ParseError{Offset: start, Reason: fmt.Sprintf("expected '*', got %q", line[0])}
		}
		if len(line) == 1 {
			// Redis: "*" then the end of the file reads as a C string that
			// ends after '*'.
			return nil, &ParseError{Offset: c.off, Truncated: true, Reason: "the file ends after '*'"}
		}
		if line[1] == 0 {
			return nil, &ParseError{Offset: start, Reason: "NUL after '*'"}
		}
		argc = int(int32(strtol(line[1:]))) // C: atoi is (int)strtol
		if argc < 1 {
			return nil, &ParseError{Offset: start, Reason: fmt.Sprintf("invalid argument count %q", bytes.TrimRight(line, "\r\n"))}
		}
		break
	}
	c.data = c.data[:0]
	c.spans = c.spans[:0]
	for j := 0; j < argc; j++ {
		line, err := c.line()
		if err != nil {
			return nil, err
		}
		if line == nil {
			return nil, &ParseError{Offset: c.off, Truncated: true, Reason: fmt.Sprintf("argument %d of %d is missing", j+1, argc)}
		}
		start := c.off
		c.off += int64(len(line))
		if line[0] != '$' {
			return nil, &ParseError{Offset: start, Reason: fmt.Sprintf("expected '$', got %q", line[0])}
		}
		n := strtol(line[1:])
		if n < 0 {
			// Redis reads it as a huge unsigned length and aborts on the
			// allocation; here it is a format error.
			return nil, &ParseError{Offset: start, Reason: fmt.Sprintf("negative bulk length %d", n)}
		}
		if left := c.size - c.off; n > left {
			return nil, &ParseError{Offset: c.size, Truncated: true,
				Reason: fmt.Sprintf("argument %d of %d announces %d bytes, %d left", j+1, argc, n, max(left, 0))}
		}
		at := len(c.data)
		c.data = slices.Grow(c.data, int(n))[:at+int(n)]
		if _, err := io.ReadFull(c.r, c.data[at:]); err != nil {
			return nil, c.readErr(err, "argument %d of %d is cut off", j+1, argc)
		}
		c.off += n
		c.spans = append(c.spans, [2]int{at, len(c.data)})
		// The two bytes after the payload (CRLF) are skipped unchecked.
		if _, err := c.r.Discard(2); err != nil {
			return nil, c.readErr(err, "the CRLF after argument %d of %d is cut off", j+1, argc)
		}
		c.off += 2
	}
	c.args = c.args[:0]
	for _, s := range c.spans {
		c.args = append(c.args, c.data[s[0]:s[1]:s[1]])
	}
	return c.args, nil
}

// readErr turns a read that hit the end of the input into a truncation.
func (c *CommandReader) readErr(err error, format string, args ...any) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &ParseError{Offset: c.size, Truncated: true, Reason: fmt.Sprintf(format, args...)}
	}
	return err
}

// line is fgets with Redis' 1024-byte buffer: up to and including the next
// '\n', at most 1023 bytes, or what is left at the end of the input; nil at
// the end. It does not consume: the caller adds len(line) to off and the
// bytes are discarded before the next read.
func (c *CommandReader) line() ([]byte, error) {
	buf, err := c.r.Peek(annotationLineMax - 1)
	if len(buf) == 0 {
		if err == nil || errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		buf = buf[:i+1]
	}
	// Copy: Peek's bytes are only valid until the next read.
	c.lbuf = append(c.lbuf[:0], buf...)
	_, _ = c.r.Discard(len(c.lbuf)) // cannot fail: the bytes were peeked
	return c.lbuf, nil
}

// strtol is C's strtol(s, NULL, 10) on a C string: optional blanks, an
// optional sign, digits, stopping at anything else (a NUL included);
// saturating at the int64 limits as strtol does at LONG_MIN/LONG_MAX.
func strtol(s []byte) int64 {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var n int64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		d := int64(s[i] - '0')
		if neg {
			if n < (math.MinInt64+d)/10 {
				return math.MinInt64
			}
			n = n*10 - d
		} else {
			if n > (math.MaxInt64-d)/10 {
				return math.MaxInt64
			}
			n = n*10 + d
		}
	}
	return n
}
