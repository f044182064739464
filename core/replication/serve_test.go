package replication

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// The master side against a scripted replica (the tests against a real
// redis-server replica are in cmd/svcdb/replication_master_test.go).

// fakeSource is a snapshot: it calls at, then writes payload, as the
// runtime's WriteReplicaSnapshot writes after its point in time.
type fakeSource struct{ payload string }

func (fakeSource) StartReplicaFeed(FeedSink) {}

func (s fakeSource) WriteReplicaSnapshot(w io.Writer, _ FeedSink, at func()) error {
	at()
	_, err := io.WriteString(w, s.payload)
	return err
}

func newMaster(t *testing.T, diskless bool) *Replica {
	t.Helper()
	return New(Config{Target: &recordingTarget{}, Source: fakeSource{"REDIS0009-payload"}, Dir: t.TempDir(),
		DisklessSync: func() bool { return diskless }, BacklogSize: 64})
}

// attach runs PSYNC replID offset for a scripted replica and returns its
// end of the link.
func attach(r *Replica, info ReplicaInfo, replID string, offset int64) (*bufio.Reader, net.Conn) {
	mine, theirs := net.Pipe()
	r.Attach(theirs, info, true, replID, offset)
	return bufio.NewReader(mine), mine
}

func readN(t *testing.T, br *bufio.Reader, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(br, b); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMasterFullSyncThenStream(t *testing.T) {
	for _, diskless := range []bool{false, true} {
		r := newMaster(t, diskless)
		id := r.IDs().ID
		br, conn := attach(r, ReplicaInfo{Addr: "x", IP: "127.0.0.1", ListeningPort: 7, CapaEOF: true, CapaPSync2: true}, "?", -1)
		if got, want := readN(t, br, len("+FULLRESYNC  0\r\n")+40), "+FULLRESYNC "+id+" 0\r\n"; got != want {
			t.Fatalf("diskless=%v: %q, want %q", diskless, got, want)
		}
		hdr, _ := br.ReadString('\n')
		if diskless {
			mark := strings.TrimSuffix(strings.TrimPrefix(hdr, "$EOF:"), "\r\n")
			if len(mark) != 40 || readN(t, br, 17+40) != "REDIS0009-payload"+mark {
				t.Fatalf("diskless transfer: header %q", hdr)
			}
		} else if hdr != "$17\r\n" || readN(t, br, 17) != "REDIS0009-payload" {
			t.Fatalf("disk transfer: header %q", hdr)
		}
		rec := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
		r.Append([]byte(rec))
		if diskless {
			// Nothing follows the EOF mark until the replica's first ACK:
			// a replica looks for the mark in the last bytes it read.
			_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			if b, err := br.ReadByte(); err == nil {
				t.Fatalf("diskless: %q sent before the replica's first ACK", b)
			}
			_ = conn.SetReadDeadline(time.Time{})
			if _, err := conn.Write([]byte("*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$1\r\n0\r\n")); err != nil {
				t.Fatal(err)
			}
		}
		if got := readN(t, br, len(rec)); got != rec {
			t.Fatalf("stream: %q", got)
		}
		if _, err := conn.Write([]byte("*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$2\r\n27\r\n")); err != nil {
			t.Fatal(err)
		}
		fields := map[string]string{}
		waitUntil(t, func() bool {
			r.Info(func(k string, v any) { fields[k] = toString(v) })
			return strings.Contains(fields["slave0"], "offset=27")
		})
		if fields["connected_slaves"] != "1" || fields["master_repl_offset"] != "27" || fields["repl_backlog_histlen"] != "27" ||
			fields["slave0"] != "ip=127.0.0.1,port=7,state=online,offset=27,lag=0" {
			t.Fatalf("INFO: %v", fields)
		}
		if n := r.Wait(1, time.Second); n != 1 {
			t.Fatalf("WAIT 1 = %d", n)
		}
		conn.Close()
		waitUntil(t, func() bool { return r.ConnectedReplicas() == 0 })

		// Reconnecting at offset 28 (27 bytes held, the next is 28): +CONTINUE.
		br, conn = attach(r, ReplicaInfo{CapaPSync2: true}, id, 28)
		if got := readN(t, br, len("+CONTINUE \r\n")+40); got != "+CONTINUE "+id+"\r\n" {
			t.Fatalf("%q", got)
		}
		r.Append([]byte("*1\r\n$4\r\nPING\r\n"))
		if got := readN(t, br, 14); got != "*1\r\n$4\r\nPING\r\n" {
			t.Fatalf("after +CONTINUE: %q", got)
		}
		conn.Close()
		// Past the 64-byte backlog: a full resync.
		r.Append([]byte(strings.Repeat("x", 100)))
		br, conn = attach(r, ReplicaInfo{CapaPSync2: true}, id, 28)
		if got, _ := br.ReadString('\n'); !strings.HasPrefix(got, "+FULLRESYNC "+id+" 141") {
			t.Fatalf("after the backlog moved on: %q", got)
		}
		conn.Close()
		if full, ok, bad := r.SyncStats(); full < 1 || ok != 1 || bad != 1 {
			t.Fatalf("sync stats %d %d %d", full, ok, bad)
		}
	}
}

// TestSlowReplicaDropped: Append never blocks on a replica that reads
// nothing; past the hard limit the replica is dropped.
func TestSlowReplicaDropped(t *testing.T) {
	r := newMaster(t, true)
	r.SetReplicaBufferLimit(1000, 0, 0)
	br, conn := attach(r, ReplicaInfo{CapaEOF: true}, "?", -1)
	defer conn.Close()
	hdr, _ := br.ReadString('\n')
	if !strings.HasPrefix(hdr, "+FULLRESYNC") {
		t.Fatal(hdr)
	}
	// The replica reads nothing more: the payload's write blocks the
	// sending goroutine, never Append.
	done := make(chan struct{})
	go func() {
		for range 100 {
			r.Append([]byte(strings.Repeat("y", 100)))
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Append blocked on a replica that reads nothing")
	}
	waitUntil(t, func() bool { return r.ConnectedReplicas() == 0 })
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func toString(v any) string { return fmt.Sprint(v) }

// TestSyncGetsNoFullResyncLine: SYNC (the old protocol) gets the payload
// at once, as Redis' pre-PSYNC replicas.
func TestSyncGetsNoFullResyncLine(t *testing.T) {
	r := newMaster(t, false)
	mine, theirs := net.Pipe()
	defer mine.Close()
	r.Attach(theirs, ReplicaInfo{}, false, "", -1)
	br := bufio.NewReader(mine)
	if hdr, _ := br.ReadString('\n'); hdr != "$17\r\n" || readN(t, br, 17) != "REDIS0009-payload" {
		t.Fatalf("SYNC: %q", hdr)
	}
}
