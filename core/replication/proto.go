package replication

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/svcdb/svcdb/core/resp"
)

// IDLen is the length of a replication ID (Redis' CONFIG_RUN_ID_SIZE) and of
// the mark that delimits a diskless transfer.
const IDLen = 40

// PSyncKind is what a master answered to PSYNC.
type PSyncKind uint8

const (
	// FullResync: +FULLRESYNC <replid> <offset>, an RDB payload follows.
	FullResync PSyncKind = iota + 1
	// Continue: +CONTINUE [<replid>], the stream resumes after our offset;
	// the ID is there when the master's ID changed (PSYNC2 after a
	// promotion) and is empty otherwise.
	Continue
	// TryLater: -NOMASTERLINK or -LOADING, the master cannot serve a sync
	// now (Redis' PSYNC_TRY_LATER).
	TryLater
)

// PSyncReply is a master's parsed answer to PSYNC.
type PSyncReply struct {
	Kind   PSyncKind
	ReplID string // FullResync; Continue when the master's ID changed
	Offset int64  // FullResync: the offset the RDB payload stands for
}

// ErrPSyncRefused is a master's error reply to PSYNC other than TryLater
// (a master without PSYNC: Redis would fall back to SYNC, which svcdb does
// not speak).
var ErrPSyncRefused = errors.New("master refused PSYNC")

// ParsePSyncReply parses the reply line to PSYNC, without its CRLF, as
// Redis' slaveTryPartialResynchronization reads it. An empty line is the
// keep-alive newline some masters send while they prepare: the caller reads
// the next line instead of calling ParsePSyncReply with it.
func ParsePSyncReply(line []byte) (PSyncReply, error) {
	switch {
	case bytes.HasPrefix(line, []byte("+FULLRESYNC")):
		// "+FULLRESYNC <40-char replid> <offset>"; Redis refuses an ID
		// that is not exactly 40 bytes ("Master replied with wrong
		// +FULLRESYNC syntax").
		f := bytes.Fields(line[len("+FULLRESYNC"):])
		if len(f) != 2 || len(f[0]) != IDLen {
			return PSyncReply{}, fmt.Errorf("master replied with wrong +FULLRESYNC syntax: %q", line)
		}
		off, err := strconv.ParseInt(string(f[1]), 10, 64)
		if err != nil || off < 0 {
			return PSyncReply{}, fmt.Errorf("master replied with wrong +FULLRESYNC offset: %q", line)
		}
		return PSyncReply{Kind: FullResync, ReplID: string(f[0]), Offset: off}, nil
	case bytes.HasPrefix(line, []byte("+CONTINUE")):
		// "+CONTINUE" or "+CONTINUE <new replid>"; an ID of another length
		// is ignored, as Redis does (it only checks for 40 bytes).
		rest := bytes.TrimSpace(line[len("+CONTINUE"):])
		r := PSyncReply{Kind: Continue}
		if len(rest) == IDLen {
			r.ReplID = string(rest)
		}
		return r, nil
	case bytes.HasPrefix(line, []byte("-NOMASTERLINK")), bytes.HasPrefix(line, []byte("-LOADING")):
		return PSyncReply{Kind: TryLater}, nil
	case len(line) > 0 && line[0] == '-':
		return PSyncReply{}, fmt.Errorf("%w: %q", ErrPSyncRefused, line)
	}
	return PSyncReply{}, fmt.Errorf("unexpected reply to PSYNC: %q", line)
}

// Transfer is the header of a full sync's payload.
type Transfer struct {
	// Size is the payload's length in bytes, or -1 for an EOF-marked one.
	Size int64
	// Mark ends an EOF-marked payload (diskless master): the payload is
	// every byte up to the first time the last IDLen bytes read equal it.
	Mark []byte
}

// ParseTransferHeader parses the line that starts the payload, without its
// CRLF: "$<len>" or "$EOF:<40 bytes>" (Redis' readSyncBulkPayload). An
// error line ("-ERR ...") is the master's refusal. Empty lines are
// keep-alives the caller skips.
func ParseTransferHeader(line []byte) (Transfer, error) {
	if len(line) > 0 && line[0] == '-' {
		return Transfer{}, fmt.Errorf("master aborted the sync: %q", line)
	}
	if len(line) == 0 || line[0] != '$' {
		return Transfer{}, fmt.Errorf("bad protocol from master, the first byte is not '$' (we received %q), are you sure the host and port are right?", line)
	}
	if bytes.HasPrefix(line, []byte("$EOF:")) {
		mark := line[len("$EOF:"):]
		if len(mark) != IDLen {
			return Transfer{}, fmt.Errorf("bad EOF mark from master: %q", line)
		}
		return Transfer{Size: -1, Mark: bytes.Clone(mark)}, nil
	}
	n, ok := resp.ParseInt(line[1:])
	if !ok || n < 0 {
		return Transfer{}, fmt.Errorf("bad payload length from master: %q", line)
	}
	return Transfer{Size: n}, nil
}

// Stream parses a master's command stream, keeping Redis' offsets: Read is
// every byte taken from the input, Applied every byte of the commands
// processed (see the package doc for MULTI). It is the parser of one link;
// not safe for concurrent use.
type Stream struct {
	parser resp.Parser
	args   [][]byte
	// Applied is the replication offset: bytes of the commands processed,
	// advanced by Commit. Read is the bytes consumed by Next.
	Applied, Read int64
	inMulti       bool
	pending       int64 // bytes of the transaction so far, committed at EXEC
}

// Reset starts the stream over at offset (after a full or partial sync).
func (s *Stream) Reset(offset int64) {
	s.parser.Reset()
	s.Applied, s.Read, s.inMulti, s.pending = offset, offset, false, 0
}

// InMulti reports whether the commands processed are inside MULTI, waiting
// for EXEC.
func (s *Stream) InMulti() bool { return s.inMulti }

// Next parses the command at the front of buf. It returns the command's
// arguments (aliasing buf, valid until the next call), and n, the bytes it
// used; n == 0 means buf holds only part of a command. A command with no
// arguments (an empty line) has n > 0 and no args. Call Commit once the
// command ran. A protocol error means the link must be dropped.
func (s *Stream) Next(buf []byte) (args [][]byte, n int, err error) {
	args, n, err = s.parser.Parse(buf, s.args[:0])
	if err != nil || n == 0 {
		return nil, 0, err
	}
	s.args = args[:0]
	s.Read += int64(n)
	return args, n, nil
}

// Commit records that the command Next returned (n bytes, args) was
// processed: the offset advances by n, or, inside MULTI, at EXEC by the
// whole transaction.
func (s *Stream) Commit(args [][]byte, n int) {
	switch {
	case len(args) == 1 && resp.EqualFold(args[0], "multi"):
		s.inMulti, s.pending = true, int64(n)
		return
	case s.inMulti && len(args) == 1 && (resp.EqualFold(args[0], "exec") || resp.EqualFold(args[0], "discard")):
		s.inMulti = false
		s.Applied += s.pending + int64(n)
		s.pending = 0
		return
	case s.inMulti:
		s.pending += int64(n)
		return
	}
	s.Applied += int64(n)
}

// DropMulti forgets an unterminated transaction (the link broke inside
// it): the offset stays at its MULTI, so a partial resync sends it again.
func (s *Stream) DropMulti() {
	s.inMulti, s.pending = false, 0
}

// AppendAck appends REPLCONF ACK <offset> as a RESP command.
func AppendAck(dst []byte, offset int64) []byte {
	dst = append(dst, "*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n"...)
	return resp.AppendBulkInt(dst, offset)
}

// AppendCommand appends args as a RESP multibulk command.
func AppendCommand(dst []byte, args ...string) []byte {
	dst = resp.AppendArrayHeader(dst, len(args))
	for _, a := range args {
		dst = resp.AppendBulkString(dst, a)
	}
	return dst
}
