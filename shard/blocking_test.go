package shard

import (
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard/keyspace"
)

// parked receives a parked client's final reply.
type parked chan []byte

func (w parked) Unblocked(reply []byte, retry bool) {
	if retry {
		reply = []byte("+retry\r\n")
	}
	w <- reply
}

// parkClient runs a blocking command as a client that can be parked and
// returns the channel its reply arrives on (at once when it did not park).
func parkClient(t *testing.T, rt *Runtime, p *producer, args ...string) parked {
	t.Helper()
	w := make(parked, 1)
	c := &keyspace.Ctx{}
	c.Bind(rt.env)
	c.Blocker = w
	c.Now = time.Now().UnixMilli()
	for _, a := range args {
		c.Args = append(c.Args, []byte(a))
	}
	c.Cmd = p.table.Lookup(c.Args[0])
	if _, where := rt.Route(c.Cmd, c.Args); where != keyspace.Coordinated {
		t.Fatalf("%s is not routed through ExecMulti", args[0])
	}
	rt.ExecMulti(c)
	if c.Blocked == nil {
		w <- c.Out
	}
	return w
}

// value waits for the reply and parses it.
func (w parked) value(t *testing.T) resp.Value {
	t.Helper()
	select {
	case b := <-w:
		v, _, err := resp.ReadReply(b)
		if err != nil {
			t.Fatalf("bad reply %q: %v", b, err)
		}
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("no reply")
	}
	return resp.Value{}
}

// reply waits for the reply and formats it with resp.Value.String.
func (w parked) reply(t *testing.T) string {
	t.Helper()
	return w.value(t).String()
}

// none checks that no reply arrives within 20ms.
func (w parked) none(t *testing.T) {
	t.Helper()
	select {
	case b := <-w:
		t.Fatalf("unexpected reply %q", b)
	case <-time.After(20 * time.Millisecond):
	}
}
