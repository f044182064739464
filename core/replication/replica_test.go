package replication

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The replica against a scripted master: what a real redis-server does not
// do on demand (-NOAUTH to PING, keep-alive newlines before the PSYNC reply
// and the payload, -LOADING to PSYNC, +CONTINUE with a new ID). The tests
// against a real redis-server 7.0 are in cmd/svcdb/replication_test.go.

// recordingTarget is the keyspace's side, recorded.
type recordingTarget struct {
	mu      sync.Mutex
	loaded  []string
	applied []string
	begun   int
}

func (r *recordingTarget) Begin(_ func() bool, at func()) {
	r.mu.Lock()
	r.begun++
	r.mu.Unlock()
	if at != nil {
		at()
	}
}
func (r *recordingTarget) End() {}
func (r *recordingTarget) Load(rdb io.Reader) error {
	b, err := io.ReadAll(rdb)
	r.mu.Lock()
	r.loaded = append(r.loaded, string(b))
	r.mu.Unlock()
	return err
}
func (r *recordingTarget) Apply(args [][]byte) error {
	r.mu.Lock()
	r.applied = append(r.applied, fmt.Sprintf("%s", args))
	r.mu.Unlock()
	return nil
}
func (r *recordingTarget) DropMulti() {}

// scriptedConn is one accepted connection of the scripted master.
type scriptedConn struct {
	t  *testing.T
	nc net.Conn
	rd *bufio.Reader
}

// expect reads one command and fails unless it is want (space-joined).
func (c *scriptedConn) expect(want string) {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := c.rd.ReadString('\n')
	if err != nil || line[0] != '*' {
		c.t.Fatalf("reading %q: %q %v", want, line, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	args := make([]string, n)
	for i := range args {
		hdr, _ := c.rd.ReadString('\n')
		l, _ := strconv.Atoi(strings.TrimSpace(hdr[1:]))
		b := make([]byte, l+2)
		if _, err := io.ReadFull(c.rd, b); err != nil {
			c.t.Fatal(err)
		}
		args[i] = string(b[:l])
	}
	if got := strings.Join(args, " "); got != want {
		c.t.Fatalf("master got %q, want %q", got, want)
	}
}

func (c *scriptedConn) send(s string) {
	c.t.Helper()
	if _, err := c.nc.Write([]byte(s)); err != nil {
		c.t.Fatal(err)
	}
}

func TestReplicaAgainstScriptedMaster(t *testing.T) {
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
	target := &recordingTarget{}
	r := New(Config{
		Target:        target,
		Dir:           t.TempDir(),
		ListeningPort: func() int { return 1234 },
		Auth:          func() (string, string) { return "repl", "secret" },
		AckPeriod:     time.Hour, // only the ACKs the test asks for
		RetryMin:      10 * time.Millisecond,
		RetryMax:      10 * time.Millisecond,
	})
	port := l.Addr().(*net.TCPAddr).Port
	if err := r.SetMaster("127.0.0.1", port); err != nil {
		t.Fatal(err)
	}
	defer r.SetMasterNone()
	if err := r.SetMaster("127.0.0.1", port); err != ErrSameMaster {
		t.Errorf("SetMaster twice: %v", err)
	}

	// 1. Full sync, diskless, with every keep-alive Redis may send.
	c := accept()
	c.expect("PING")
	c.send("-NOAUTH Authentication required.\r\n")
	c.expect("AUTH repl secret")
	c.send("+OK\r\n")
	c.expect("REPLCONF listening-port 1234")
	c.send("+OK\r\n")
	c.expect("REPLCONF capa eof capa psync2")
	c.send("+OK\r\n")
	c.expect("PSYNC ? -1")
	c.send("\n\n+FULLRESYNC " + id40 + " 100\r\n\n\n$EOF:" + strings.Repeat("m", 40) + "\r\nPAYLOAD" + strings.Repeat("m", 40))
	c.expect("REPLCONF ACK 100") // at once: a diskless master waits for it
	c.send("*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$4\r\nPING\r\n")
	c.send("*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n")
	c.expect("REPLCONF ACK 164") // 100 + SELECT 23 + SET 27 + PING 14, not the GETACK
	if st := r.State(); st != StateConnected {
		t.Errorf("state %v while streaming", st)
	}
	target.mu.Lock()
	if fmt.Sprint(target.loaded) != "[PAYLOAD]" || fmt.Sprint(target.applied) != "[[SELECT 0] [SET k v]]" || target.begun != 1 {
		t.Errorf("loaded %q, applied %q, begun %d", target.loaded, target.applied, target.begun)
	}
	target.mu.Unlock()
	// The GETACK counts once processed, just after the ACK is written.
	for deadline := time.Now().Add(5 * time.Second); r.Offset() != 201 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if ids := r.IDs(); ids.ID != id40 || r.Offset() != 201 {
		t.Errorf("after the stream: IDs %+v offset %d", ids, r.Offset())
	}
	c.nc.Close() // the link breaks

	// 2. PSYNC with the cached master; the master is loading: try later.
	c = accept()
	c.expect("PING")
	c.send("+PONG\r\n")
	c.expect("AUTH repl secret")
	c.send("+OK\r\n")
	c.expect("REPLCONF listening-port 1234")
	c.send("+OK\r\n")
	c.expect("REPLCONF capa eof capa psync2")
	c.send("-ERR unknown\r\n") // not fatal
	c.expect("PSYNC " + id40 + " 202")
	c.send("-LOADING Redis is loading the dataset in memory\r\n")
	c.nc.Close()

	// 3. +CONTINUE with a new ID: the old one becomes the secondary ID.
	c = accept()
	c.expect("PING")
	c.send("+PONG\r\n")
	c.expect("AUTH repl secret")
	c.send("+OK\r\n")
	c.expect("REPLCONF listening-port 1234")
	c.send("+OK\r\n")
	c.expect("REPLCONF capa eof capa psync2")
	c.send("+OK\r\n")
	c.expect("PSYNC " + id40 + " 202")
	newID := strings.Repeat("b", 40)
	c.send("+CONTINUE " + newID + "\r\n")
	c.expect("REPLCONF ACK 201")
	if ids := r.IDs(); ids.ID != newID || ids.ID2 != id40 || ids.Offset2 != 202 {
		t.Errorf("after +CONTINUE with a new ID: %+v", ids)
	}
	if r.FullSyncs() != 1 || r.PartialSyncs() != 1 {
		t.Errorf("syncs: %d full, %d partial", r.FullSyncs(), r.PartialSyncs())
	}
	var info strings.Builder
	r.Info(func(name string, v any) { fmt.Fprintf(&info, "%s:%v\n", name, v) })
	for _, f := range []string{"role:slave", "master_link_status:up", "slave_repl_offset:201", "master_replid:" + newID, "master_replid2:" + id40, "second_repl_offset:202"} {
		if !strings.Contains(info.String(), f+"\n") {
			t.Errorf("INFO lacks %q:\n%s", f, info.String())
		}
	}
	if got := string(r.AppendRole(nil)); got != "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:"+strconv.Itoa(port)+"\r\n$9\r\nconnected\r\n:201\r\n" {
		t.Errorf("ROLE %q", got)
	}
	c.nc.Close()
}
