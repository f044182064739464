// Package resp owns the Redis serialization protocol for svcdb: parsing
// client requests (RESP2 multibulk and inline commands) from borrowed
// bytes, encoding RESP2 and RESP3 replies, and reading replies back for
// tests and tools. Redis 7.0 is the reference: request parsing follows its
// networking.c (processInlineBuffer, processMultibulkBuffer) and
// sdssplitargs, and every error text matches it byte for byte.
//
// # What it must never do
//
//   - Allocate per command on the hot path. Parser.Parse returns arguments
//     that alias the caller's buffer, in the caller's argsbuf, and keeps
//     its own state for reuse: a multibulk command costs no allocation once
//     the connection is warm. Reply encoders only append to dst.
//   - Size anything from a client-supplied count or length before checking
//     it against Limits, or from the count alone: a client announcing
//     2^31 arguments or a 512 MiB bulk costs nothing until it sends them.
//   - Panic, on any input.
//   - Import other svcdb packages. core is the bottom of the dependency
//     graph; netloop and shard build on it.
//
// # Request grammar
//
// A request whose first byte is '*' is a multibulk command; anything else
// is an inline command. RESP3 changes only replies: clients send requests
// as RESP2 multibulk (or inline) in both protocols, as with Redis.
//
//	multibulk  = "*" count CR any bulk{count}     ; count <= 0: empty command
//	bulk       = "$" length CR any payload any any ; payload is length bytes
//	count      = integer                           ; <= Limits.MaxArgs
//	length     = integer                           ; 0 ..= Limits.MaxBulkLen
//	integer    = "0" | ["-"] digit1-9 *digit       ; < 21 bytes, fits int64
//	inline     = line ("\n" | "\r\n")              ; split like sdssplitargs
//
// Exactly as Redis does, a header line ends at its first CR and the byte
// after the CR is skipped without being checked, and so are the two bytes
// after a bulk payload (normally "\r\n"). A header line is not parsed until
// the byte after its CR has arrived, so "expected '$'" is reported only for
// a complete line.
//
// An inline line ends at the first LF; one CR before it is dropped. It is
// split into arguments as sdssplitargs does: blanks (C isspace) separate
// arguments, although an unquoted argument ends only at space, tab, CR or
// LF (so "\v" and "\f" can be inside one); "double quotes" understand
// \n \r \t \b \a \xHH and \<any> escapes; 'single quotes' understand \';
// quotes may start mid-argument (a"b c" is one argument, "ab c") and a
// closing quote must be followed by a blank or the end of the line. An
// empty or blank line is an empty command.
//
// # Limits and errors
//
// Limits holds proto-max-bulk-len (512 MiB), PROTO_INLINE_MAX_SIZE (64 KiB:
// the longest inline line and the longest header line) and the largest
// multibulk count (INT_MAX). Input Redis rejects yields a *ProtocolError
// whose Msg is Redis' text after "-ERR ":
//
//	Protocol error: too big mbulk count string        count line longer than MaxInlineLen
//	Protocol error: invalid multibulk length          count not an integer, or > MaxArgs
//	Protocol error: expected '$', got 'X'             element line not starting with '$'
//	Protocol error: too big bulk count string         length line longer than MaxInlineLen
//	Protocol error: invalid bulk length               length not an integer, < 0 or > MaxBulkLen
//	Protocol error: too big inline request            inline line longer than MaxInlineLen
//	Protocol error: unbalanced quotes in request      inline quoting error
//	Protocol error: unauthenticated multibulk length  count > 10 while Unauthenticated
//	Protocol error: unauthenticated bulk length       length > 16384 while Unauthenticated
//
// As in Redis, the invalid checks come first: with Unauthenticated set, a
// count above MaxArgs is still "invalid multibulk length", and a length
// above MaxBulkLen "invalid bulk length".
//
// The caller replies with ProtocolError.AppendReply and closes the
// connection.
//
// # Where this differs from Redis, on purpose
//
//   - Redis checks the 64 KiB line limits only when a read ends before the
//     line does, so the same bytes can be "too big" or "invalid" depending on
//     how they arrived. Here the outcome depends only on the bytes: a line
//     longer than MaxInlineLen is too big. Both reject the command. This is
//     what lets every split of the input parse the same way.
//   - Redis treats buffers as C strings in a few places: a NUL byte before
//     the end of a header or inline line makes it wait for input forever
//     (until the line limit), and sdssplitargs stops at a NUL. Here NUL is an
//     ordinary byte: "*1\r\n\x00..." is "expected '$', got '\x00'", and NUL
//     can be part of an inline argument.
//   - MaxArgs does not apply to inline commands, as in Redis; MaxInlineLen
//     bounds them. Neither do Redis 7.0's limits for unauthenticated
//     clients (Limits.Unauthenticated: multibulk count 10, bulk 16 KiB),
//     which Redis checks only in processMultibulkBuffer.
//
// # Buffer lifetimes
//
// Parse sees the pending input as one contiguous buffer that starts at the
// first byte of the pending command. When a command straddles reads, the
// caller keeps the unconsumed bytes and appends the next read to them (the
// only copy, into a per-connection buffer); Need tells it how large that
// buffer must grow for a bulk argument, and the parser resumes where it
// stopped rather than scanning the bytes again.
//
// Parser.Parse borrows buf: the arguments it returns alias it (or the
// parser's scratch buffer for inline arguments with quotes or escapes) and
// are valid until the next Parse or Reset call and only while buf is not
// modified. Whatever must outlive that, for example arguments handed to a
// shard goroutine, must be copied by the caller at that boundary.
// ReadReply copies what it returns. The pre-encoded replies (OK, NullBulk,
// ErrSyntax, ...) are shared and must never be modified.
//
// # Replies
//
// Encoders are append-style, AppendX(dst, ...) []byte, formatting numbers
// with strconv.Append* directly into dst. Types RESP2 lacks take a resp3
// flag and degrade as Redis does (maps to flat arrays, doubles and big
// numbers to bulk strings, booleans to integers, null to "$-1" or "*-1").
// Doubles use Redis 7.0's "%.17g" (ZSCORE of 1.1 is "1.1000000000000001");
// AppendBulkFloat uses INCRBYFLOAT's fixed notation ("10.5", "3000").
package resp
