//go:build !race

package tracking

import "testing"

// TestSendAllocs: telling a reader its key changed allocates nothing once
// its mailbox has room (the race detector allocates, hence the build tag).
func TestSendAllocs(t *testing.T) {
	r := &conn{id: 1, resp3: true}
	s := newServer(r)
	s.enable(t, r)
	key := []byte("user:42")
	r.box = make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(1000, func() {
		r.box = r.box[:0]
		s.t.send(&r.st, message{key: key})
	}); n != 0 {
		t.Errorf("send: %v allocs per run; want 0", n)
	}
	if got, want := r.take(), ">2|$10|invalidate|*1|$7|user:42|"; got != want {
		t.Errorf("sent %q; want %q", got, want)
	}
}
