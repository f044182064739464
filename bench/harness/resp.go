package harness

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svcdb/svcdb/core/resp"
)

// respConn is a minimal RESP2 client for the harness's own questions to a
// server (INFO, DBSIZE): one command at a time, replies read whole by
// resp.ReadReply. The benchmarks' traffic does not go through it.
type respConn struct {
	c   net.Conn
	buf []byte // bytes read and not yet taken by a reply
}

func dialRESP(ctx context.Context, addr string) (*respConn, error) {
	d := net.Dialer{Timeout: 5 * time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return &respConn{c: c}, nil
}

func (c *respConn) Close() error { return c.c.Close() }

// errReply is an error reply from the server.
type errReply string

func (e errReply) Error() string { return string(e) }

// do sends one command and returns its reply; an error reply is returned as
// an errReply error.
func (c *respConn) do(args ...string) (resp.Value, error) {
	_ = c.c.SetDeadline(time.Now().Add(30 * time.Second))
	b := resp.AppendArrayHeader(nil, len(args))
	for _, a := range args {
		b = resp.AppendBulkString(b, a)
	}
	if _, err := c.c.Write(b); err != nil {
		return resp.Value{}, err
	}
	rp, err := c.read()
	if err == nil && rp.Type == '-' {
		err = errReply(rp.Str)
	}
	return rp, err
}

// read returns the next reply, reading from the connection until one is
// whole.
func (c *respConn) read() (resp.Value, error) {
	for {
		if len(c.buf) > 0 {
			rp, n, err := resp.ReadReply(c.buf)
			if err != nil {
				return resp.Value{}, err
			}
			if n > 0 {
				c.buf = c.buf[n:]
				return rp, nil
			}
		}
		c.buf = slices.Grow(c.buf, 64<<10)
		n, err := c.c.Read(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		if err != nil && n == 0 {
			return resp.Value{}, err
		}
	}
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
	if rp.Type != '$' {
		return nil, fmt.Errorf("INFO %s: reply of type %q, want a bulk string", section, rp.Type)
	}
	return parseInfo(string(rp.Str)), nil
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
