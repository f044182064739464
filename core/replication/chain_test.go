package replication

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Chained replicas, Go-level (under -race): a replica of a scripted master
// serves two replicas of its own. The real-process tests are in
// cmd/svcdb/replication_chain_test.go.

// chainSource is a snapshot of the recordingTarget: at its point in time
// it notes how many commands the target has applied, then writes payload.
type chainSource struct {
	target  *recordingTarget
	payload string
	mu      sync.Mutex
	seen    int
}

func (*chainSource) StartReplicaFeed(FeedSink) {}

func (s *chainSource) WriteReplicaSnapshot(w io.Writer, _ FeedSink, at func()) error {
	s.target.mu.Lock()
	n := len(s.target.applied)
	s.target.mu.Unlock()
	s.mu.Lock()
	s.seen = n
	s.mu.Unlock()
	at()
	_, err := io.WriteString(w, s.payload)
	return err
}

// slowTarget applies a command, then takes a moment before Apply returns:
// a snapshot taken meanwhile would see the command while the link has not
// yet counted its bytes, unless the stream is paused between commands.
type slowTarget struct{ *recordingTarget }

func (s slowTarget) Apply(args [][]byte) error {
	err := s.recordingTarget.Apply(args)
	time.Sleep(200 * time.Microsecond)
	return err
}

// setCmd is the i-th command the scripted master streams: 30 bytes each.
func setCmd(i int) string {
	return fmt.Sprintf("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4\r\nv%03d\r\n", i)
}

// subReplica is the far end of a replica attached to r.
type subReplica struct {
	t  *testing.T
	nc net.Conn
	rd *bufio.Reader
}

// attachSub connects a replica to r as netloop's cmdSync would hand it over.
func attachSub(t *testing.T, r *Replica, psync bool, replID string, offset int64) *subReplica {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	far, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	near, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { far.Close() })
	r.Attach(near, ReplicaInfo{Addr: far.LocalAddr().String(), IP: "127.0.0.1", ListeningPort: 1, CapaPSync2: true}, psync, replID, offset)
	return &subReplica{t: t, nc: far, rd: bufio.NewReader(far)}
}

// read reads exactly len(want) bytes and fails unless they are want.
func (s *subReplica) read(want string) {
	s.t.Helper()
	_ = s.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	got := make([]byte, len(want))
	if _, err := io.ReadFull(s.rd, got); err != nil {
		s.t.Fatalf("reading %q: got %q, %v", want, got, err)
	}
	if string(got) != want {
		s.t.Fatalf("sub-replica got %q, want %q", got, want)
	}
}

func (s *subReplica) line() string {
	s.t.Helper()
	_ = s.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	l, err := s.rd.ReadString('\n')
	if err != nil {
		s.t.Fatalf("reading a line: %q %v", l, err)
	}
	return strings.TrimRight(l, "\r\n")
}

func TestChainedReplicaServesMastersStream(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accept := func() *scriptedConn {
		t.Helper()
		_ = l.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
		nc, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return &scriptedConn{t: t, nc: nc, rd: bufio.NewReader(nc)}
	}
	handshake := func(c *scriptedConn, psync string) {
		t.Helper()
		c.expect("PING")
		c.send("+PONG\r\n")
		c.expect("REPLCONF capa eof capa psync2")
		c.send("+OK\r\n")
		c.expect(psync)
	}
	target := &recordingTarget{}
	src := &chainSource{target: target, payload: "SNAPSHOT"}
	r := New(Config{Target: slowTarget{target}, Source: src, Dir: t.TempDir(), AckPeriod: time.Hour,
		RetryMin: 10 * time.Millisecond, RetryMax: 10 * time.Millisecond})
	port := l.Addr().(*net.TCPAddr).Port
	if err := r.SetMaster("127.0.0.1", port); err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	// While the link is not up, a replica of ours is refused.
	refused := attachSub(t, r, true, "?", -1)
	if got := refused.line(); got != "-"+ErrNotMaster.Error() {
		t.Errorf("PSYNC while the link is down: %q", got)
	}

	c := accept()
	handshake(c, "PSYNC ? -1")
	c.send("+FULLRESYNC " + id40 + " 100\r\n$4\r\nDATA")
	c.expect("REPLCONF ACK 100")
	c.send(setCmd(0))
	waitOffset(t, r, 130)

	// 1. A replica of ours continues on the master's ID and offsets, and
	// gets the master's bytes verbatim.
	s1 := attachSub(t, r, true, id40, 131)
	s1.read("+CONTINUE " + id40 + "\r\n")
	c.send(setCmd(1))
	s1.read(setCmd(1))

	// 2. A full sync from us while the master streams: the snapshot holds
	// exactly the commands up to the offset +FULLRESYNC announces, and
	// every later one follows it, once.
	const total = 200
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 2; i < total; i++ {
			if _, err := c.nc.Write([]byte(setCmd(i))); err != nil {
				t.Errorf("streaming: %v", err)
				return
			}
		}
	}()
	s2 := attachSub(t, r, true, "?", -1)
	var off int64
	if _, err := fmt.Sscanf(s2.line(), "+FULLRESYNC "+id40+" %d", &off); err != nil {
		t.Fatal(err)
	}
	s2.read("$8\r\nSNAPSHOT")
	src.mu.Lock()
	seen := src.seen
	src.mu.Unlock()
	// applied holds [SELECT]-less SETs only: command i is the (i+1)-th.
	if want := int64(100 + 30*seen); off != want {
		t.Errorf("+FULLRESYNC at %d; the snapshot held %d commands (offset %d)", off, seen, want)
	}
	<-done
	for i := seen; i < total; i++ {
		s2.read(setCmd(i))
	}
	for i := 2; i < total; i++ {
		s1.read(setCmd(i))
	}
	waitOffset(t, r, 100+30*total)

	// 3. Our link breaks: our replicas stay and continue after +CONTINUE.
	c.nc.Close()
	c = accept()
	handshake(c, fmt.Sprintf("PSYNC %s %d", id40, 100+30*total+1))
	c.send("+CONTINUE " + id40 + "\r\n")
	c.send(setCmd(total))
	s1.read(setCmd(total))
	s2.read(setCmd(total))
	waitOffset(t, r, 100+30*(total+1))

	// 4. Promoted: they are disconnected to learn our new ID.
	r.SetMasterNone()
	for _, s := range []*subReplica{s1, s2} {
		_ = s.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := s.rd.Read(make([]byte, 1)); err == nil {
			t.Errorf("a replica of ours read %d bytes after the promotion, want EOF", n)
		}
	}
	s3 := attachSub(t, r, true, id40, 100+30*(total+1)+1)
	if got := s3.line(); got != "+CONTINUE "+r.IDs().ID {
		t.Errorf("PSYNC on the old ID after the promotion: %q", got)
	}
	if full, partial, _ := r.SyncStats(); full != 1 || partial != 2 {
		t.Errorf("sync_full %d sync_partial_ok %d, want 1 and 2", full, partial)
	}
}

// waitOffset waits until r processed the stream up to off.
func waitOffset(t *testing.T, r *Replica, off int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); r.Offset() != off; {
		if time.Now().After(deadline) {
			t.Fatalf("offset %d, want %d", r.Offset(), off)
		}
		time.Sleep(time.Millisecond)
	}
}
