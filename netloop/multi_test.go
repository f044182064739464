package netloop_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/shard"
)

func newGoRedis(t testing.TB, addr string, poolSize int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: poolSize, MaxRetries: -1, ReadTimeout: 10 * time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestWatchOptimisticIncrement: clients increment one counter with
// WATCH/GET/MULTI/SET/EXEC and retry when EXEC fails; no increment may be
// lost (a lost one means EXEC ran although the key changed) and every retry
// must be caused by someone else's change.
func TestWatchOptimisticIncrement(t *testing.T) {
	for _, st := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			ts := startServer(t, withStrategy(st))
			rdb := newGoRedis(t, ts.Addr, 16)
			ctx := context.Background()
			const workers, each = 8, 50
			var wg sync.WaitGroup
			var failures sync.Map
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range each {
						for {
							err := rdb.Watch(ctx, func(tx *redis.Tx) error {
								n, err := tx.Get(ctx, "counter").Int()
								if err != nil && !errors.Is(err, redis.Nil) {
									return err
								}
								_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
									p.Set(ctx, "counter", n+1, 0)
									return nil
								})
								return err
							}, "counter")
							if err == nil {
								break
							}
							if !errors.Is(err, redis.TxFailedErr) {
								failures.Store(w, err)
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			failures.Range(func(k, v any) bool { t.Errorf("worker %v: %v", k, v); return true })
			if got, _ := rdb.Get(ctx, "counter").Int(); got != workers*each {
				t.Fatalf("counter = %d, want %d: an EXEC ran although its watched key had changed", got, workers*each)
			}
		})
	}
}

// TestExecAtomicAcrossShards: transfers between keys on different shards run
// in MULTI/EXEC while readers read all accounts in one MULTI/EXEC; every read
// must see the same total.
func TestExecAtomicAcrossShards(t *testing.T) {
	ts := startServer(t, withShards(4))
	rdb := newGoRedis(t, ts.Addr, 16)
	ctx := context.Background()
	const accounts, total = 8, 8000
	keys := make([]string, accounts)
	for i := range keys {
		keys[i] = "acct:" + strconv.Itoa(i)
		rdb.Set(ctx, keys[i], total/accounts, 0)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				from, to := keys[(w+i)%accounts], keys[(w+i*3+1)%accounts]
				if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
					p.DecrBy(ctx, from, 7)
					p.IncrBy(ctx, to, 7)
					return nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 300 {
		cmds, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.MGet(ctx, keys...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		sum := 0
		for _, v := range cmds[0].(*redis.SliceCmd).Val() {
			n, _ := strconv.Atoi(v.(string))
			sum += n
		}
		if sum != total {
			close(stop)
			wg.Wait()
			t.Fatalf("a transaction saw a half-done transfer: total %d, want %d", sum, total)
		}
	}
	close(stop)
	wg.Wait()
}

// TestWatchSeesOtherClients: a change by another client, a deletion and an
// expiry each make EXEC fail; an untouched key lets it run.
func TestWatchSeesOtherClients(t *testing.T) {
	ts := startServer(t)
	a, b := dialRaw(t, ts.Addr), dialRaw(t, ts.Addr)
	cases := []struct {
		name   string
		setup  []string
		change []string // by client b; nil = no change
		wait   time.Duration
		fails  bool
	}{
		{"set by another client", []string{"SET", "k", "1"}, []string{"SET", "k", "2"}, 0, true},
		{"deleted by another client", []string{"SET", "k", "1"}, []string{"DEL", "k"}, 0, true},
		{"created by another client", []string{"DEL", "k"}, []string{"SET", "k", "x"}, 0, true},
		{"expire set by another client", []string{"SET", "k", "1"}, []string{"EXPIRE", "k", "100"}, 0, true},
		{"expired while watched", []string{"SET", "k", "1", "PX", "30"}, nil, 60 * time.Millisecond, true},
		{"other key changed", []string{"SET", "k", "1"}, []string{"SET", "other", "2"}, 0, false},
		{"untouched", []string{"SET", "k", "1"}, nil, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a.do(tc.setup...)
			if v := a.do("WATCH", "k"); string(v.Str) != "OK" {
				t.Fatalf("WATCH: %v", v)
			}
			if tc.change != nil {
				b.do(tc.change...)
			}
			time.Sleep(tc.wait)
			a.do("MULTI")
			a.do("PING")
			v := a.do("EXEC")
			if tc.fails != v.Null {
				t.Fatalf("EXEC = %v; want failed=%v", v, tc.fails)
			}
		})
	}
}

// TestMultiPipelinedWithOtherCommands: a pipeline mixing plain commands and a
// transaction gets every reply in order.
func TestMultiPipelinedWithOtherCommands(t *testing.T) {
	ts := startServer(t)
	r := dialRaw(t, ts.Addr)
	var in string
	for i := range 20 {
		in += multibulk("SET", fmt.Sprint("p", i), fmt.Sprint(i))
	}
	in += multibulk("MULTI") + multibulk("INCR", "p1") + multibulk("GET", "p2") + multibulk("EXEC") + multibulk("GET", "p1")
	r.write(in)
	for i := range 20 {
		if v := r.read(); string(v.Str) != "OK" {
			t.Fatalf("reply %d = %v", i, v)
		}
	}
	for _, want := range []string{"OK", "QUEUED", "QUEUED"} {
		if v := r.read(); string(v.Str) != want {
			t.Fatalf("got %v, want %s", v, want)
		}
	}
	if v := r.read(); len(v.Elems) != 2 || v.Elems[0].Int != 2 || string(v.Elems[1].Str) != "2" {
		t.Fatalf("EXEC = %v", v)
	}
	if v := r.read(); string(v.Str) != "2" {
		t.Fatalf("GET after EXEC = %v", v)
	}
}
