package netloop_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
)

// TestFullShardQueueParks: with the smallest shard queue (two batches) and
// many pipelining clients, producers find the queue full all the time. Each
// such connection parks (connWaitingRoom: it stops parsing, keeps its
// input) and the shard wakes it when it takes a batch out; none spins, none
// is lost, and every client gets all its replies, in order. A lost wake-up
// would leave a client without replies and fail the read deadline.
func TestFullShardQueueParks(t *testing.T) {
	for _, st := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(st), withShards(2),
				func(_ *netloop.Config, sc *shard.Config) { sc.QueueCap = 2 })
			const clients, perClient = 32, 300
			var wg sync.WaitGroup
			errs := make(chan error, clients)
			for ci := range clients {
				c := dialRaw(t, ts.Addr)
				wg.Go(func() {
					var sb strings.Builder
					for j := range perClient {
						sb.WriteString(multibulk("INCR", fmt.Sprintf("own:%d", ci)))
						sb.WriteString(multibulk("INCR", fmt.Sprintf("shared:%d", j%2)))
					}
					wait := c.writeAsync(sb.String())
					defer wait()
					for j := range perClient {
						v, err := c.tryRead(30 * time.Second)
						if err != nil || v.Type != ':' || v.Int != int64(j+1) {
							errs <- fmt.Errorf("client %d reply %d: %v %v, want :%d", ci, 2*j, v, err, j+1)
							return
						}
						if v, err = c.tryRead(30 * time.Second); err != nil || v.Type != ':' {
							errs <- fmt.Errorf("client %d reply %d: %v %v", ci, 2*j+1, v, err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			c := dialRaw(t, ts.Addr)
			want(t, c.do("GET", "shared:0"), fmt.Sprintf("%q", fmt.Sprint(clients*perClient/2)))
			want(t, c.do("GET", "shared:1"), fmt.Sprintf("%q", fmt.Sprint(clients*perClient/2)))
		})
	}
}
