package resp

import (
	"math"
	"strconv"
	"strings"
)

// Pre-encoded replies. They are shared by every connection and must never
// be modified: append them to an output buffer (dst = append(dst, OK...)),
// do not write into them or pass them where they could be.
var (
	OK         = []byte("+OK\r\n")
	PONG       = []byte("+PONG\r\n")
	QUEUED     = []byte("+QUEUED\r\n")
	NullBulk   = []byte("$-1\r\n") // RESP2 null bulk string
	NullArray  = []byte("*-1\r\n") // RESP2 null array
	Null3      = []byte("_\r\n")   // RESP3 null
	EmptyArray = []byte("*0\r\n")
	Zero       = []byte(":0\r\n")
	One        = []byte(":1\r\n")
	CRLF       = []byte("\r\n")
)

// Pre-encoded error replies, byte for byte as Redis 7.0 sends them (its
// shared.* objects). Like the replies above, they must never be modified.
var (
	ErrSyntax     = []byte("-ERR syntax error\r\n")
	ErrNotInteger = []byte("-ERR value is not an integer or out of range\r\n")
	ErrNotFloat   = []byte("-ERR value is not a valid float\r\n")
	ErrWrongType  = []byte("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
	ErrNoAuth     = []byte("-NOAUTH Authentication required.\r\n")
	ErrOverflow   = []byte("-ERR increment or decrement would overflow\r\n")
)

// appendPrefixed appends <prefix><n>\r\n: integers, lengths and counts.
//
// Below 100 (most bulk lengths, array headers and small integers) it is one
// append of constant bytes: half the time of the three appends and
// strconv's call (7.6-8.5 against 14-18 ns on this machine, minimums of 5).
func appendPrefixed(dst []byte, prefix byte, n int64) []byte {
	if uint64(n) < 10 {
		return append(dst, prefix, byte('0'+n), '\r', '\n')
	}
	if uint64(n) < 100 {
		return append(dst, prefix, digitPairs[2*n], digitPairs[2*n+1], '\r', '\n')
	}
	dst = append(dst, prefix)
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '\r', '\n')
}

// digitPairs holds "00" to "99": digitPairs[2*n:2*n+2] is n in two digits.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// appendNoCRLF appends s with every '\r' and '\n' replaced by a space, so a
// line-framed reply can never be broken by its content (Redis' sdsmapchars).
func appendNoCRLF[S ~string | ~[]byte](dst []byte, s S) []byte {
	start := len(dst)
	dst = append(dst, s...)
	for i := start; i < len(dst); i++ {
		if c := dst[i]; c == '\r' || c == '\n' {
			dst[i] = ' '
		}
	}
	return dst
}

// AppendSimpleString appends a simple string reply "+s\r\n". Redis only
// sends server-chosen status texts; any '\r' or '\n' in s is replaced by a
// space so the frame stays well-formed whatever s holds.
func AppendSimpleString(dst []byte, s string) []byte {
	dst = append(dst, '+')
	dst = appendNoCRLF(dst, s)
	return append(dst, '\r', '\n')
}

// AppendError appends an error reply "-msg\r\n". msg is the whole text after
// '-', error code included: "ERR syntax error", "WRONGTYPE ...". As Redis'
// addReplyErrorFormat does, leading and trailing CR/LF are trimmed and any
// other '\r' or '\n' becomes a space.
func AppendError(dst []byte, msg string) []byte {
	dst = append(dst, '-')
	dst = appendNoCRLF(dst, strings.Trim(msg, "\r\n"))
	return append(dst, '\r', '\n')
}

// AppendInt appends an integer reply ":n\r\n".
func AppendInt(dst []byte, n int64) []byte {
	return appendPrefixed(dst, ':', n)
}

// AppendBulk appends a bulk string reply "$<len>\r\nb\r\n". A nil b is an
// empty bulk string, not a null: use AppendNull for that.
func AppendBulk(dst []byte, b []byte) []byte {
	dst = appendPrefixed(dst, '$', int64(len(b)))
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendBulkString is AppendBulk for a string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = appendPrefixed(dst, '$', int64(len(s)))
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// decimalLen is the length of strconv.FormatInt(n, 10).
func decimalLen(n int64) int {
	l := 1
	u := uint64(n)
	if n < 0 {
		l++
		u = -u
	}
	for u >= 10 {
		u /= 10
		l++
	}
	return l
}

// AppendBulkInt appends n in decimal as a bulk string (Redis'
// addReplyBulkLongLong, e.g. for GET of an integer-encoded value).
func AppendBulkInt(dst []byte, n int64) []byte {
	dst = appendPrefixed(dst, '$', int64(decimalLen(n)))
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '\r', '\n')
}

// bulkify turns the text appended to dst from start on into a bulk string,
// by inserting the "$<len>\r\n" header in front of it. For payloads whose
// length is only known once formatted (floats), without a scratch buffer.
func bulkify(dst []byte, start int) []byte {
	n := len(dst) - start
	var hdr [24]byte // "$" + up to 20 digits + "\r\n"
	h := appendPrefixed(hdr[:0], '$', int64(n))
	dst = append(dst, h...) // grow by len(h)
	copy(dst[start+len(h):], dst[start:start+n])
	copy(dst[start:], h)
	return append(dst, '\r', '\n')
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// appendG17 formats f like C's printf("%.17g"), which Redis 7.0's
// addReplyDouble uses: 1.1 -> "1.1000000000000001", 3000 -> "3000",
// 1e20 -> "1e+20", 1e-5 -> "1.0000000000000001e-05". Infinities are "inf"
// and "-inf" as in Redis; NaN is "nan" (glibc would print "-nan" for a NaN
// with the sign bit set).
//
// strconv's 'g' with precision 17 follows the same rules as C: %e when the
// exponent is < -4 or >= 17, trailing zeros removed, at least two exponent
// digits.
func appendG17(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	case math.IsNaN(f):
		return append(dst, "nan"...)
	}
	return strconv.AppendFloat(dst, f, 'g', 17, 64)
}

// AppendDouble appends a double reply as Redis 7.0's addReplyDouble does:
// RESP3 ",<%.17g>\r\n" (",inf", ",-inf", ",nan"), RESP2 the same text as a
// bulk string ("$18\r\n1.1000000000000001\r\n", "$3\r\ninf\r\n").
func AppendDouble(dst []byte, f float64, resp3 bool) []byte {
	if resp3 {
		dst = append(dst, ',')
		dst = appendG17(dst, f)
		return append(dst, '\r', '\n')
	}
	start := len(dst)
	dst = appendG17(dst, f)
	return bulkify(dst, start)
}

// AppendArrayHeader appends an array header "*n\r\n"; n elements follow.
func AppendArrayHeader(dst []byte, n int) []byte {
	return appendPrefixed(dst, '*', int64(n))
}

// AppendNull appends a null: RESP3 "_\r\n", RESP2 the null bulk "$-1\r\n".
func AppendNull(dst []byte, resp3 bool) []byte {
	if resp3 {
		return append(dst, Null3...)
	}
	return append(dst, NullBulk...)
}

// AppendNullArray appends a null array: RESP3 "_\r\n", RESP2 "*-1\r\n".
func AppendNullArray(dst []byte, resp3 bool) []byte {
	if resp3 {
		return append(dst, Null3...)
	}
	return append(dst, NullArray...)
}

// AppendMapHeader appends a map header for n key/value pairs: RESP3 "%n\r\n",
// RESP2 a flat array "*<2n>\r\n". 2n pairs of elements follow.
func AppendMapHeader(dst []byte, n int, resp3 bool) []byte {
	if resp3 {
		return appendPrefixed(dst, '%', int64(n))
	}
	return appendPrefixed(dst, '*', 2*int64(n))
}

// AppendSetHeader appends a set header: RESP3 "~n\r\n", RESP2 "*n\r\n".
func AppendSetHeader(dst []byte, n int, resp3 bool) []byte {
	if resp3 {
		return appendPrefixed(dst, '~', int64(n))
	}
	return appendPrefixed(dst, '*', int64(n))
}

// AppendPushHeader appends a push header (pub/sub messages, invalidations):
// RESP3 ">n\r\n", RESP2 "*n\r\n".
func AppendPushHeader(dst []byte, n int, resp3 bool) []byte {
	if resp3 {
		return appendPrefixed(dst, '>', int64(n))
	}
	return appendPrefixed(dst, '*', int64(n))
}

// AppendHelp appends a HELP reply as Redis' addReplyHelp sends it: an array
// of simple strings, one per line.
func AppendHelp(dst []byte, lines []string) []byte {
	dst = AppendArrayHeader(dst, len(lines))
	for _, l := range lines {
		dst = AppendSimpleString(dst, l)
	}
	return dst
}

// AppendVerbatim appends a verbatim string: RESP3
// "=<len>\r\n<format>:<text>\r\n", RESP2 a bulk string of text alone.
// format is the three-byte type, "txt" or "mkd"; the length is computed
// from the bytes actually written, so another length still makes a
// well-formed (if non-standard) frame.
func AppendVerbatim(dst []byte, format string, text []byte, resp3 bool) []byte {
	if !resp3 {
		return AppendBulk(dst, text)
	}
	dst = appendPrefixed(dst, '=', int64(len(format)+1+len(text)))
	dst = append(dst, format...)
	dst = append(dst, ':')
	dst = append(dst, text...)
	return append(dst, '\r', '\n')
}

// maxEcho is the "%.128s" precision Redis uses when it echoes client bytes
// in an error, and the budget for the argument list of an unknown command.
const maxEcho = 128

// appendEcho appends client bytes the way Redis' printf("%.*s", max, arg)
// prints them: cut at the first NUL (a C string ends there), at most max
// bytes (which may split a UTF-8 sequence, as in Redis), CR and LF turned
// into spaces (rejectCommandFormat's sdsmapchars). Every other byte is
// echoed raw, as Redis does. It returns the number of bytes written.
func appendEcho(dst []byte, s []byte, max int) ([]byte, int) {
	if i := indexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if len(s) > max {
		s = s[:max]
	}
	return appendNoCRLF(dst, s), len(s)
}

// AppendErrUnknownCommand appends Redis 7.0's reply to an unknown command:
//
//	-ERR unknown command 'name', with args beginning with: 'a' 'b' \r\n
//
// args are the arguments after the name. As in Redis the name is cut to
// 128 bytes, arguments are added while the argument text is under 128
// bytes, each cut to what is left of that budget, and every string stops at
// a NUL byte and has CR/LF replaced by spaces. Other bytes are echoed raw.
func AppendErrUnknownCommand(dst []byte, name []byte, args [][]byte) []byte {
	dst = append(dst, "-ERR unknown command '"...)
	dst, _ = appendEcho(dst, name, maxEcho)
	dst = append(dst, "', with args beginning with: "...)
	used := 0
	for _, a := range args {
		if used >= maxEcho {
			break
		}
		var w int
		dst = append(dst, '\'')
		dst, w = appendEcho(dst, a, maxEcho-used)
		dst = append(dst, '\'', ' ')
		used += w + 3
	}
	return append(dst, '\r', '\n')
}

// appendASCIICase appends s converted to lower (upper=false) or upper case,
// ASCII only like C's toupper/tolower in the C locale, with CR/LF turned
// into spaces.
func appendASCIICase[S ~string | ~[]byte](dst []byte, s S, upper bool) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\r' || c == '\n':
			c = ' '
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// AppendErrWrongArity appends
//
//	-ERR wrong number of arguments for 'name' command\r\n
//
// name is the command's full name as in the command table ("get",
// "config|get"); Redis prints cmd->fullname, so it is lower-cased here
// whatever case the client used.
func AppendErrWrongArity(dst []byte, name []byte) []byte {
	dst = append(dst, "-ERR wrong number of arguments for '"...)
	dst = appendASCIICase(dst, name, false)
	return append(dst, "' command\r\n"...)
}

// AppendErrUnknownSubcommand appends the reply Redis 7.0 gives when a
// container command (CONFIG, CLIENT, ...) gets an unknown subcommand:
//
//	-ERR unknown subcommand 'sub'. Try CMD HELP.\r\n
//
// sub is echoed like AppendErrUnknownCommand echoes names (128 bytes, NUL
// cut, CR/LF to spaces); cmd is upper-cased.
func AppendErrUnknownSubcommand(dst []byte, sub []byte, cmd string) []byte {
	return appendSubcommandError(dst, "-ERR unknown subcommand '", sub, cmd)
}

// AppendErrSubcommandSyntax appends the reply of Redis'
// addReplySubcommandSyntaxError, which a container command's own handler
// sends for a subcommand it does not know or with the wrong arguments:
//
//	-ERR unknown subcommand or wrong number of arguments for 'sub'. Try CMD HELP.\r\n
func AppendErrSubcommandSyntax(dst []byte, sub []byte, cmd string) []byte {
	return appendSubcommandError(dst, "-ERR unknown subcommand or wrong number of arguments for '", sub, cmd)
}

// appendSubcommandError writes prefix, the echoed sub, then "'. Try CMD HELP.".
func appendSubcommandError(dst []byte, prefix string, sub []byte, cmd string) []byte {
	dst = append(dst, prefix...)
	dst, _ = appendEcho(dst, sub, maxEcho)
	dst = append(dst, "'. Try "...)
	dst = appendASCIICase(dst, cmd, true)
	return append(dst, " HELP.\r\n"...)
}
