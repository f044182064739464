package netloop_test

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdb/svcdb/netloop"
)

// TestBurstRepliesReachTheirClients: with one event loop serving many
// pipelining clients at once, replies are written together at the end of
// the loop's turn (writeback.go). Every client must get exactly its own
// replies, in order, while other connections send a pipeline and close
// without reading: a deferred reply of a closed connection must never be
// written, since its file descriptor may already belong to a new client.
func TestBurstRepliesReachTheirClients(t *testing.T) {
	ts := startServer(t, withNetConfig(func(c *netloop.Config) { c.EventLoops = 1 }))
	const clients, rounds, depth = 24, 60, 16
	errs := make(chan error, clients+1)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Add(1)
	go func() { // connections that vanish with replies owed
		defer churn.Done()
		pipeline := strings.Repeat(multibulk("INCR", "churn"), depth)
		for {
			select {
			case <-stop:
				return
			default:
			}
			c, err := net.DialTimeout("tcp", ts.Addr, 5*time.Second)
			if err != nil {
				errs <- err
				return
			}
			_, _ = c.Write([]byte(pipeline))
			c.Close()
		}
	}()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.DialTimeout("tcp", ts.Addr, 5*time.Second)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			rd := bufio.NewReader(c)
			key := fmt.Sprintf("burst:%d", i)
			pipeline := []byte(strings.Repeat(multibulk("INCR", key), depth))
			n := 0
			for range rounds {
				c.SetDeadline(time.Now().Add(10 * time.Second))
				if _, err := c.Write(pipeline); err != nil {
					errs <- fmt.Errorf("client %d: %v", i, err)
					return
				}
				for range depth {
					n++
					line, err := rd.ReadString('\n')
					if err != nil {
						errs <- fmt.Errorf("client %d, reply %d: %v", i, n, err)
						return
					}
					if want := fmt.Sprintf(":%d\r\n", n); line != want {
						errs <- fmt.Errorf("client %d: reply %d is %q, want %q", i, n, line, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	churn.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
