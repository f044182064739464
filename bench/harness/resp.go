package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// respConn is a minimal RESP2 client for the harness's own questions to a
// server (INFO, DBSIZE): one command at a time, replies read whole. The
// benchmarks' traffic does not go through it.
type respConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRESP(ctx context.Context, addr string) (*respConn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &respConn{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

func (c *respConn) Close() error { return c.c.Close() }

// reply is one RESP2 reply: Kind is its type byte ('+', '-', ':', '$', '*');
// Str holds simple strings, errors and bulk strings, Int integers, Elems
// arrays. Null is set for $-1 and *-1.
type reply struct {
	Kind  byte
	Str   string
	Int   int64
	Elems []reply
	Null  bool
}

// errReply is an error reply from the server.
type errReply string

func (e errReply) Error() string { return string(e) }

// do sends one command and returns its reply; an error reply is returned as
// an errReply error.
func (c *respConn) do(args ...string) (reply, error) {
	_ = c.c.SetDeadline(time.Now().Add(30 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.c.Write([]byte(b.String())); err != nil {
		return reply{}, err
	}
	rp, err := readReply(c.r)
	if err == nil && rp.Kind == '-' {
		err = errReply(rp.Str)
	}
	return rp, err
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(line, "\r\n") {
		return "", fmt.Errorf("RESP: line %q does not end in CRLF", line)
	}
	return line[:len(line)-2], nil
}

func readReply(r *bufio.Reader) (reply, error) {
	line, err := readLine(r)
	if err != nil {
		return reply{}, err
	}
	if line == "" {
		return reply{}, errors.New("RESP: empty line")
	}
	rp := reply{Kind: line[0]}
	body := line[1:]
	switch rp.Kind {
	case '+', '-':
		rp.Str = body
	case ':':
		rp.Int, err = strconv.ParseInt(body, 10, 64)
	case '$':
		n, perr := strconv.Atoi(body)
		if perr != nil || n < -1 || n > 512<<20 {
			return reply{}, fmt.Errorf("RESP: bulk length %q", body)
		}
		if n == -1 {
			rp.Null = true
			return rp, nil
		}
		buf := make([]byte, n+2)
		if _, err = io.ReadFull(r, buf); err != nil {
			return reply{}, err
		}
		rp.Str = string(buf[:n])
	case '*':
		n, perr := strconv.Atoi(body)
		if perr != nil || n < -1 || n > 1<<24 {
			return reply{}, fmt.Errorf("RESP: array length %q", body)
		}
		if n == -1 {
			rp.Null = true
			return rp, nil
		}
		rp.Elems = make([]reply, n)
		for i := range rp.Elems {
			if rp.Elems[i], err = readReply(r); err != nil {
				return reply{}, err
			}
		}
	default:
		return reply{}, fmt.Errorf("RESP: unexpected reply %q", line)
	}
	return rp, err
}

// info asks addr for INFO section and returns its "key:value" fields.
func info(ctx context.Context, addr, section string) (map[string]string, error) {
	c, err := dialRESP(ctx, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rp, err := c.do("INFO", section)
	if err != nil {
		return nil, fmt.Errorf("INFO %s: %w", section, err)
	}
	if rp.Kind != '$' {
		return nil, fmt.Errorf("INFO %s: reply of type %q, want a bulk string", section, rp.Kind)
	}
	return parseInfo(rp.Str), nil
}

// parseInfo reads INFO's "key:value" lines; "# Section" and blank lines are
// skipped.
func parseInfo(text string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// infoInt returns field k of an INFO reply as an integer, and whether the
// server reported it.
func infoInt(m map[string]string, k string) (int64, bool) {
	v, ok := m[k]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}
