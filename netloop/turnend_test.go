package netloop

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/svcdb/svcdb/core/command"
	"github.com/svcdb/svcdb/shard"
)

// turnEnds sums the clients whose replies OnTurnEnd wrote, over s's loops.
func turnEnds(s *Server) (n int64) {
	s.loops.mu.Lock()
	defer s.loops.mu.Unlock()
	for _, l := range s.loops.m {
		n += l.endWrites.Load()
	}
	return n
}

// TestRepliesWrittenAtTurnEnd: replies reach their clients through the
// end-of-turn hook of the patched gnet (writeback.go): every request-reply
// round of a client that waits for each reply is one turn whose replies
// OnTurnEnd writes, for single commands, pipelines and commands that wait
// for a shard's batch. Without the hook (gnet unpatched, or OnTurnEnd not
// reached) the replies never come and the count stays 0.
func TestRepliesWrittenAtTurnEnd(t *testing.T) {
	table := command.New()
	rt, err := shard.New(shard.Config{Shards: 4, Strategy: shard.RunToCompletion}, table)
	if err != nil {
		t.Fatal(err)
	}
	rt.Start()
	defer rt.Close()
	srv := New(Config{Bind: "127.0.0.1", Port: 0, EventLoops: 2, Version: "test"}, table, rt)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Stop(t.Context()); err != nil {
			t.Errorf("stopping server: %v", err)
		}
	}()

	const clients, rounds, depth = 4, 50, 8
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- turnEndClient(srv.Addr(), i, rounds, depth)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Each round is one turn with replies at least (a pipeline split across
	// reads is more); a reply written at once would not count.
	if got, want := turnEnds(srv), int64(clients*rounds); got < want {
		t.Fatalf("OnTurnEnd wrote the replies of %d client turns; want at least %d (one a round)", got, want)
	}
}

// turnEndClient runs rounds of: one SET, then a pipeline of depth GETs, each
// round waiting for all its replies.
func turnEndClient(addr string, id, rounds, depth int) error {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	key := fmt.Sprintf("turnend:%d", id)
	for r := range rounds {
		val := fmt.Sprint(r)
		set := fmt.Sprintf("*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n", len(key), key, len(val), val)
		get := strings.Repeat(fmt.Sprintf("*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", len(key), key), depth)
		want := []string{"+OK\r\n"}
		for range depth {
			want = append(want, fmt.Sprintf("$%d\r\n", len(val)), val+"\r\n")
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		for i, in := range []string{set, get} {
			if _, err := c.Write([]byte(in)); err != nil {
				return err
			}
			lines := want[:1]
			if i == 1 {
				lines = want[1:]
			}
			for _, w := range lines {
				line, err := rd.ReadString('\n')
				if err != nil {
					return fmt.Errorf("client %d round %d: %v (no reply: is the end-of-turn hook wired?)", id, r, err)
				}
				if line != w {
					return fmt.Errorf("client %d round %d: got %q, want %q", id, r, line, w)
				}
			}
		}
	}
	return nil
}

// discardConn is a gnet.Conn whose writes go nowhere: enough for flush.
type discardConn struct {
	gnet.Conn
	el gnet.EventLoop
}

func (d *discardConn) EventLoop() gnet.EventLoop   { return d.el }
func (d *discardConn) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardConn) OutboundBuffered() int       { return 0 }

// discardLoop stands for a gnet event loop: only its identity is used.
type discardLoop struct{ gnet.EventLoop }

// TestTurnEndAllocs: deferring a reply and writing it at the end of the turn
// allocates nothing once the loop's list has grown (the hot path's 0).
func TestTurnEndAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates; this test runs without -race in make test")
	}
	table := command.New()
	rt, err := shard.New(shard.Config{Shards: 2}, table)
	if err != nil {
		t.Fatal(err)
	}
	srv := New(Config{}, table, rt)
	el := &discardLoop{}
	var cs []*client
	for range 8 {
		cs = append(cs, srv.newClient(&discardConn{el: el}))
	}
	turn := func() {
		for _, c := range cs {
			c.out = append(c.out, "+OK\r\n"...)
			c.loop.writeBack(c)
		}
		srv.OnTurnEnd(el)
	}
	turn() // warm: the deferred list grows once
	if n := testing.AllocsPerRun(1000, turn); n != 0 {
		t.Fatalf("%v allocs per turn; want 0", n)
	}
	if got := turnEnds(srv); got != 1001*8+8 {
		t.Fatalf("OnTurnEnd wrote %d replies; want %d", got, 1001*8+8)
	}
}
