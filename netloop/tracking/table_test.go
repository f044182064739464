package tracking

import (
	"strings"
	"sync"
	"testing"
)

// The table on its own, with connections reduced to what tracking.Client
// is: netloop's tests (tracking_test.go, tracking_script_test.go) run the
// same paths end to end against real clients and redis-server.

type conn struct {
	id         int64
	resp3      bool
	subscribed bool
	mu         sync.Mutex
	box        []byte
	st         State
}

func (c *conn) ID() int64        { return c.id }
func (c *conn) RESP3() bool      { return c.resp3 }
func (c *conn) Subscribed() bool { return c.subscribed }
func (c *conn) Post(m Message) {
	c.mu.Lock()
	c.box = m.AppendTo(c.box)
	c.mu.Unlock()
}

// take returns and empties c's mailbox, with CRLF shown as "|".
func (c *conn) take() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := strings.ReplaceAll(string(c.box), "\r\n", "|")
	c.box = nil
	return s
}

type server struct {
	t     Table
	conns map[int64]*conn
	hooks int
}

func newServer(conns ...*conn) *server {
	s := &server{conns: make(map[int64]*conn)}
	for _, c := range conns {
		s.conns[c.id] = c
	}
	s.t.Init(func(id int64) Client {
		if c := s.conns[id]; c != nil {
			return c
		}
		return nil
	}, func() { s.hooks++ })
	return s
}

func (s *server) enable(t *testing.T, c *conn, args ...string) {
	t.Helper()
	argv := [][]byte{[]byte("CLIENT"), []byte("TRACKING"), []byte("on")}
	for _, a := range args {
		argv = append(argv, []byte(a))
	}
	if got := string(s.t.Command(nil, &c.st, c, argv)); got != "+OK\r\n" {
		t.Fatalf("CLIENT TRACKING on %v: %q", args, got)
	}
}

func keys(ks ...string) [][]byte {
	var out [][]byte
	for _, k := range ks {
		out = append(out, []byte(k))
	}
	return out
}

func TestInvalidateTellsReadersOnce(t *testing.T) {
	r3 := &conn{id: 1, resp3: true}
	r2 := &conn{id: 2} // RESP2 without a redirect: nowhere to say it
	nl := &conn{id: 3, resp3: true}
	s := newServer(r3, r2, nl)
	s.enable(t, r3)
	s.enable(t, r2)
	s.enable(t, nl, "NOLOOP")
	s.enable(t, r3) // again: still one tracking client, hooks installed once
	if s.hooks != 1 || s.t.Clients() != 3 {
		t.Fatalf("hooks installed %d times, %d clients; want 1, 3", s.hooks, s.t.Clients())
	}
	for _, c := range []*conn{r3, r2, nl} {
		s.t.Remember(c.id, keys("k", "other"))
	}
	if k, items, _ := s.t.Stats(); k != 2 || items != 6 {
		t.Fatalf("keys %d items %d; want 2 and 6", k, items)
	}
	s.t.Invalidate(nl.id, []byte("k"), true) // nl wrote it: NOLOOP
	if got, want := r3.take(), ">2|$10|invalidate|*1|$1|k|"; got != want {
		t.Errorf("RESP3 reader got %q; want %q", got, want)
	}
	if got := r2.take() + nl.take(); got != "" {
		t.Errorf("RESP2 reader and NOLOOP writer got %q; want nothing", got)
	}
	s.t.Invalidate(0, []byte("k"), true) // forgotten: nobody is told again
	if got := r3.take(); got != "" {
		t.Errorf("second invalidation sent %q", got)
	}
	if k, items, _ := s.t.Stats(); k != 1 || items != 3 {
		t.Errorf("after the invalidation: keys %d items %d; want 1 and 3", k, items)
	}
	s.t.Disable(&r3.st)
	s.t.Invalidate(0, []byte("other"), true)
	if got := r3.take(); got != "" {
		t.Errorf("a client that turned tracking off got %q", got)
	}
	if got, want := nl.take(), ">2|$10|invalidate|*1|$5|other|"; got != want {
		t.Errorf("NOLOOP reader, another writer: got %q; want %q", got, want)
	}
}

func TestRedirect(t *testing.T) {
	tr := &conn{id: 1}
	sub := &conn{id: 2, subscribed: true}
	s := newServer(tr, sub)
	s.enable(t, tr, "REDIRECT", "2")
	s.t.Remember(tr.id, keys("k"))
	s.t.Invalidate(0, []byte("k"), true)
	if got, want := sub.take(), "*3|$7|message|$20|__redis__:invalidate|*1|$1|k|"; got != want {
		t.Errorf("RESP2 redirect target got %q; want %q", got, want)
	}
	s.t.Flush(true) // the tracking client's null (RESP2: $-1), as Redis
	if got, want := sub.take(), "*3|$7|message|$20|__redis__:invalidate|$-1|"; got != want {
		t.Errorf("flush, RESP2 tracking client: got %q; want %q", got, want)
	}
	delete(s.conns, 2) // the target goes
	s.t.Remember(tr.id, keys("k"))
	tr.resp3 = true
	s.t.Invalidate(0, []byte("k"), true)
	if got, want := tr.take(), ">2|$21|tracking-redir-broken|:2|"; got != want {
		t.Errorf("broken redirect: got %q; want %q", got, want)
	}
	if got := tr.st.FlagLetters(); got != "tR" {
		t.Errorf("flags %q; want tR", got)
	}
}

func TestBroadcast(t *testing.T) {
	a := &conn{id: 1, resp3: true}
	b := &conn{id: 2, resp3: true}
	s := newServer(a, b)
	s.enable(t, a, "BCAST", "PREFIX", "user:")
	s.enable(t, b, "BCAST", "PREFIX", "user:", "NOLOOP")
	s.t.Invalidate(b.id, []byte("user:b"), true)
	s.t.Invalidate(0, []byte("user:a"), true)
	s.t.Invalidate(0, []byte("cart:1"), true)
	if !s.t.Pending() {
		t.Fatal("nothing pending after changes under a prefix")
	}
	s.t.Broadcast()
	if got, want := a.take(), ">2|$10|invalidate|*2|$6|user:a|$6|user:b|"; got != want {
		t.Errorf("BCAST: got %q; want %q", got, want)
	}
	if got, want := b.take(), ">2|$10|invalidate|*1|$6|user:a|"; got != want {
		t.Errorf("BCAST NOLOOP: got %q; want %q", got, want)
	}
	s.t.Broadcast()
	if got := a.take(); got != "" {
		t.Errorf("second Broadcast sent %q", got)
	}
}

func TestMaxKeys(t *testing.T) {
	r := &conn{id: 1, resp3: true}
	s := newServer(r)
	s.enable(t, r)
	s.t.SetMaxKeys(2)
	s.t.Remember(r.id, keys("a", "b", "c", "d", "e"))
	if n := s.t.Keys(); n > 2 {
		t.Errorf("table holds %d keys; want at most 2", n)
	}
	if got := strings.Count(r.take(), "invalidate"); got != 3 {
		t.Errorf("%d invalidations for the forgotten keys; want 3", got)
	}
}

func TestModeAndCaching(t *testing.T) {
	c := &conn{id: 1, resp3: true}
	s := newServer(c)
	if on, reads := c.st.Mode(); on || reads {
		t.Fatalf("zero State: on %v reads %v", on, reads)
	}
	s.enable(t, c, "OPTIN")
	if _, reads := c.st.Mode(); reads {
		t.Error("OPTIN without CACHING yes remembers reads")
	}
	if got := string(c.st.Caching(nil, keys("CLIENT", "CACHING", "yes"))); got != "+OK\r\n" {
		t.Fatalf("CACHING yes: %q", got)
	}
	if _, reads := c.st.Mode(); !reads {
		t.Error("OPTIN with CACHING yes does not remember reads")
	}
	if !c.st.EndCaching() || c.st.EndCaching() {
		t.Error("EndCaching: want true once, then false")
	}
	if got, want := string(c.st.Caching(nil, keys("CLIENT", "CACHING", "no"))), "-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n"; got != want {
		t.Errorf("CACHING no in OPTIN: %q; want %q", got, want)
	}
}
