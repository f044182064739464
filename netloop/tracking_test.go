package netloop_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/netloop"
	"github.com/svcdb/svcdb/shard"
)

// Client-side caching across connections: shard/testdata/tracking.txt has
// the replies and errors of one connection, compared with redis-server.

// checkFor polls cond until it holds or d passes.
func checkFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// invalidations collects what rueidis' OnInvalidations callback is told.
type invalidations struct {
	mu   sync.Mutex
	keys []string
	all  int // null invalidations (flushes)
}

func (iv *invalidations) add(msgs []rueidis.RedisMessage) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	if msgs == nil {
		iv.all++
		return
	}
	for _, m := range msgs {
		if s, err := m.ToString(); err == nil {
			iv.keys = append(iv.keys, s)
		}
	}
}

func (iv *invalidations) has(key string) bool {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	return slices.Contains(iv.keys, key)
}

func (iv *invalidations) flushes() int {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	return iv.all
}

// rueidis with its default options (HELLO 3, client-side caching in OPTIN
// mode) connects, DoCache hits, and another client's SET, an expiry and an
// eviction each invalidate the cached entry.
func TestTrackingRueidisDefaults(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			ts := startServer(t, withShards(shards))
			ctx := testCtx(t, 30*time.Second)
			iv := &invalidations{}
			client, err := rueidis.NewClient(rueidis.ClientOption{
				InitAddress:     []string{ts.Addr},
				OnInvalidations: iv.add,
			})
			if err != nil {
				t.Fatalf("rueidis.NewClient with default options: %v", err)
			}
			t.Cleanup(client.Close)
			other := redis.NewClient(&redis.Options{Addr: ts.Addr})
			t.Cleanup(func() { other.Close() })

			get := func(key string) rueidis.RedisResult {
				return client.DoCache(ctx, client.B().Get().Key(key).Cache(), time.Minute)
			}
			if err := other.Set(ctx, "csc", "1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if r := get("csc"); r.IsCacheHit() {
				t.Fatal("first DoCache was a cache hit")
			} else if v, err := r.ToString(); err != nil || v != "1" {
				t.Fatalf("DoCache GET = %q %v", v, err)
			}
			if r := get("csc"); !r.IsCacheHit() {
				t.Fatal("second DoCache was not a cache hit")
			}
			if n := infoField(t, other, "clients", "tracking_clients"); n < 1 {
				t.Errorf("tracking_clients = %d with rueidis connected", n)
			}

			// Another client's SET invalidates it.
			if err := other.Set(ctx, "csc", "2", 0).Err(); err != nil {
				t.Fatal(err)
			}
			checkFor(t, 5*time.Second, "the SET's invalidation", func() bool { return iv.has("csc") })
			if v, err := get("csc").ToString(); err != nil || v != "2" {
				t.Fatalf("DoCache after SET = %q %v, want 2", v, err)
			}

			// An expiry (the active cycle; nobody reads the key) invalidates
			// it. The key gets its TTL after rueidis cached it (without one),
			// through PEXPIRE's own invalidation; rueidis caches it again,
			// now for at most the TTL, and the expiry's invalidation must
			// come from the server's expiry, not from a write.
			if err := other.Set(ctx, "csc:exp", "x", 0).Err(); err != nil {
				t.Fatal(err)
			}
			get("csc:exp")
			if err := other.PExpire(ctx, "csc:exp", 300*time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
			checkFor(t, 5*time.Second, "PEXPIRE's invalidation", func() bool { return iv.has("csc:exp") })
			iv.mu.Lock()
			iv.keys = nil
			iv.mu.Unlock()
			if v, err := get("csc:exp").ToString(); err != nil || v != "x" {
				t.Fatalf("DoCache of the volatile key = %q %v", v, err)
			}
			checkFor(t, 5*time.Second, "the expiry's invalidation", func() bool { return iv.has("csc:exp") })
			if n, err := other.Exists(ctx, "csc:exp").Result(); err != nil || n != 0 {
				t.Fatalf("EXISTS after the expiry's invalidation = %d %v", n, err)
			}

			// An eviction invalidates it.
			if err := other.Set(ctx, "csc:evict", "e", 0).Err(); err != nil {
				t.Fatal(err)
			}
			if v, err := get("csc:evict").ToString(); err != nil || v != "e" {
				t.Fatalf("DoCache = %q %v", v, err)
			}
			for _, kv := range [][2]string{{"maxmemory-policy", "allkeys-random"}, {"maxmemory", "2mb"}} {
				if err := other.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
					t.Fatal(err)
				}
			}
			value := strings.Repeat("v", 1024)
			for i := 0; !iv.has("csc:evict"); i++ {
				if i > 200000 {
					t.Fatal("csc:evict was never evicted and invalidated")
				}
				// Writes may be refused while eviction catches up.
				_ = other.Set(ctx, "fill:"+strconv.Itoa(i), value, 0).Err()
			}
			if n, err := other.Exists(ctx, "csc:evict").Result(); err != nil || n != 0 {
				t.Fatalf("EXISTS after the eviction's invalidation = %d %v", n, err)
			}
			if err := other.ConfigSet(ctx, "maxmemory", "0").Err(); err != nil {
				t.Fatal(err)
			}
			if r := get("csc:evict"); r.IsCacheHit() || !rueidis.IsRedisNil(r.Error()) {
				t.Fatalf("DoCache after eviction: hit %v, err %v; want a nil reply from the server", r.IsCacheHit(), r.Error())
			}

			// FLUSHALL is the null invalidation.
			before := iv.flushes()
			if err := other.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			checkFor(t, 5*time.Second, "FLUSHALL's null invalidation", func() bool { return iv.flushes() > before })
		})
	}
}

func infoField(t *testing.T, rdb *redis.Client, section, field string) int64 {
	t.Helper()
	text, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(text, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", field, line)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// go-redis over RESP2: invalidations reach a connection subscribed to
// __redis__:invalidate through REDIRECT; when it goes, the redirect is
// broken (R in CLIENT LIST, broken_redirect in TRACKINGINFO).
func TestTrackingRESP2Redirect(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t, 20*time.Second)
	rdb := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2})
	t.Cleanup(func() { rdb.Close() })

	sub := rdb.Subscribe(ctx, "__redis__:invalidate")
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(ctx); err != nil { // the confirmation
		t.Fatal(err)
	}
	var subID int64
	checkFor(t, 5*time.Second, "the subscriber in CLIENT LIST", func() bool {
		list, err := rdb.ClientList(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(list, "\n") {
			if strings.Contains(line, " flags=P ") {
				if _, err := fmt.Sscanf(line, "id=%d", &subID); err != nil {
					t.Fatalf("CLIENT LIST line %q: %v", line, err)
				}
				return true
			}
		}
		return false
	})

	conn := rdb.Conn() // tracking belongs to one connection
	t.Cleanup(func() { conn.Close() })
	if err := conn.Do(ctx, "CLIENT", "TRACKING", "on", "REDIRECT", subID).Err(); err != nil {
		t.Fatal(err)
	}
	if redir, err := conn.Do(ctx, "CLIENT", "GETREDIR").Int64(); err != nil || redir != subID {
		t.Fatalf("GETREDIR = %d %v, want %d", redir, err, subID)
	}
	if err := rdb.MSet(ctx, "r1", "a", "r2", "b").Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.MGet(ctx, "r1", "r2").Err(); err != nil {
		t.Fatal(err)
	}
	info, err := conn.ClientInfo(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if info.Flags&redis.ClientTracking == 0 || info.Redir != subID {
		t.Errorf("CLIENT INFO of the tracking connection: flags %v redirect %d", info.Flags, info.Redir)
	}
	if err := rdb.Set(ctx, "r2", "c", 0).Err(); err != nil {
		t.Fatal(err)
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if msg.Channel != "__redis__:invalidate" || !slices.Equal(msg.PayloadSlice, []string{"r2"}) {
		t.Fatalf("message: channel %q payload %q %q", msg.Channel, msg.Payload, msg.PayloadSlice)
	}

	// The redirect client goes: the next invalidation finds it missing.
	sub.Close()
	checkFor(t, 5*time.Second, "the subscriber to go", func() bool {
		list, _ := rdb.ClientList(ctx).Result()
		return !strings.Contains(list, fmt.Sprintf("id=%d ", subID))
	})
	if err := rdb.Set(ctx, "r1", "z", 0).Err(); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 5*time.Second, "broken_redirect", func() bool {
		v, err := conn.Do(ctx, "CLIENT", "TRACKINGINFO").Slice()
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(v[1].([]any), any("broken_redirect"))
	})
	line, err := conn.Do(ctx, "CLIENT", "INFO").Text()
	if err != nil || !strings.Contains(line, " flags=tR ") {
		t.Errorf("CLIENT INFO after the redirect went: %q %v", line, err)
	}
}

// trackingConn is a raw connection after HELLO 3 and CLIENT TRACKING on
// with options.
func trackingConn(t *testing.T, addr string, options ...string) *rawConn {
	t.Helper()
	c := dialRaw(t, addr)
	if v := c.do("HELLO", "3"); v.Type != '%' {
		t.Fatalf("HELLO 3: %s", formatReply(v))
	}
	if v := c.do(append([]string{"CLIENT", "TRACKING", "on"}, options...)...); formatReply(v) != "+OK" {
		t.Fatalf("CLIENT TRACKING on %v: %s", options, formatReply(v))
	}
	return c
}

// nextPush reads one push, failing on anything else.
func nextPush(t *testing.T, c *rawConn) string {
	t.Helper()
	v := c.read()
	if v.Type != '>' {
		t.Fatalf("want a push, got %s", formatReply(v))
	}
	return formatReply(v)
}

// noPush checks that nothing is waiting on c: a PING's reply comes first.
func noPush(t *testing.T, c *rawConn) {
	t.Helper()
	if got := formatReply(c.do("PING")); got != "+PONG" {
		t.Fatalf("want no push, got %s", got)
	}
}

func TestTrackingBroadcastPrefixes(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			ts := startServer(t, withShards(shards))
			bc := trackingConn(t, ts.Addr, "BCAST", "PREFIX", "user:", "PREFIX", "cart:")
			w := dialRaw(t, ts.Addr)
			// One command's keys in one message per prefix, sorted.
			w.do("MSET", "user:b", "1", "user:a", "2", "cart:1", "3", "other", "4")
			if got, want := nextPush(t, bc), `push["invalidate", ["cart:1"]]`; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
			if got, want := nextPush(t, bc), `push["invalidate", ["user:a", "user:b"]]`; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
			w.do("SET", "other", "5")
			noPush(t, bc)
			// A pipeline read in one turn: its changes go out together.
			w.write(multibulk("SET", "user:1", "x") + multibulk("DEL", "user:1") + multibulk("INCR", "user:2"))
			for range 3 {
				w.read()
			}
			var keys []string
			for len(keys) < 2 {
				v := c3read(t, bc)
				for _, k := range v.Elems[1].Elems {
					keys = append(keys, string(k.Str))
				}
			}
			slices.Sort(keys)
			if !slices.Equal(keys, []string{"user:1", "user:2"}) {
				t.Fatalf("pipelined changes: %q", keys)
			}
			noPush(t, bc)
			// Expiry under a prefix is broadcast too (the ticker sends it).
			w.do("SET", "user:exp", "1", "PX", "50")
			nextPush(t, bc)
			if got, want := nextPush(t, bc), `push["invalidate", ["user:exp"]]`; got != want {
				t.Fatalf("expiry: got %s, want %s", got, want)
			}
			in := formatReply(w.do("INFO", "stats"))
			if !strings.Contains(in, `tracking_total_prefixes:2\r\n`) {
				t.Errorf("INFO stats: %s", in)
			}
			bc.do("CLIENT", "TRACKING", "off")
			if in := formatReply(w.do("INFO", "stats")); !strings.Contains(in, `tracking_total_prefixes:0\r\n`) {
				t.Errorf("INFO stats after OFF: %s", in)
			}
		})
	}
}

func c3read(t *testing.T, c *rawConn) resp.Value {
	t.Helper()
	v := c.read()
	if v.Type != '>' || len(v.Elems) != 2 {
		t.Fatalf("want an invalidation push, got %s", formatReply(v))
	}
	return v
}

// OPTIN, OPTOUT and NOLOOP against other clients' writes.
func TestTrackingModes(t *testing.T) {
	ts := startServer(t)
	w := dialRaw(t, ts.Addr)
	w.do("MSET", "a", "1", "b", "2")

	in := trackingConn(t, ts.Addr, "OPTIN")
	in.do("GET", "a")
	in.do("CLIENT", "CACHING", "yes")
	in.do("GET", "b")
	out := trackingConn(t, ts.Addr, "OPTOUT")
	out.do("CLIENT", "CACHING", "no")
	out.do("GET", "a")
	out.do("GET", "b")
	nl := trackingConn(t, ts.Addr, "NOLOOP")
	nl.do("MGET", "a", "b")
	nl.do("SET", "a", "own") // its own change: nothing for it

	// nl's SET of a: in read a without CACHING yes, out read it under
	// CACHING no, nl changed it itself.
	for _, c := range []*rawConn{in, out, nl} {
		noPush(t, c)
	}
	w.do("SET", "b", "3")
	for _, c := range []*rawConn{in, out, nl} {
		if got, want := nextPush(t, c), `push["invalidate", ["b"]]`; got != want {
			t.Fatalf("SET b by another client: got %s, want %s", got, want)
		}
	}
	w.do("FLUSHALL")
	for _, c := range []*rawConn{in, out, nl} {
		if got, want := nextPush(t, c), `push["invalidate", (nil)]`; got != want {
			t.Fatalf("FLUSHALL: got %s, want %s", got, want)
		}
	}
	if in := formatReply(w.do("INFO", "stats")); !strings.Contains(in, `tracking_total_keys:0\r\n`) || !strings.Contains(in, `tracking_total_items:0\r\n`) {
		t.Errorf("INFO stats after FLUSHALL: %s", in)
	}
}

// tracking-table-max-keys: past the limit, random keys are forgotten and
// their readers told, and the table stays within the limit.
func TestTrackingTableLimit(t *testing.T) {
	ts := startServer(t)
	w := dialRaw(t, ts.Addr)
	if got := formatReply(w.do("CONFIG", "SET", "tracking-table-max-keys", "10")); got != "+OK" {
		t.Fatal(got)
	}
	r := trackingConn(t, ts.Addr)
	const n = 40
	invalidated := map[string]bool{}
	for i := range n {
		r.write(multibulk("GET", "lim:"+strconv.Itoa(i)))
		for {
			v := r.read()
			if v.Type != '>' {
				break // GET's reply
			}
			for _, k := range v.Elems[1].Elems {
				invalidated[string(k.Str)] = true
			}
		}
	}
	stats := formatReply(w.do("INFO", "stats"))
	if !strings.Contains(stats, `tracking_total_keys:10\r\n`) || !strings.Contains(stats, `tracking_total_items:10\r\n`) {
		t.Fatalf("INFO stats: %s", stats)
	}
	// Every key forgotten was invalidated (some pushes may still be on
	// their way): 30 in all.
	for len(invalidated) < n-10 {
		v := c3read(t, r)
		for _, k := range v.Elems[1].Elems {
			invalidated[string(k.Str)] = true
		}
	}
	if len(invalidated) != n-10 {
		t.Fatalf("%d keys invalidated, want %d", len(invalidated), n-10)
	}
	// The 10 kept are those not invalidated: writing them tells the reader.
	var kept []string
	for i := range n {
		if k := "lim:" + strconv.Itoa(i); !invalidated[k] {
			kept = append(kept, k)
		}
	}
	w.do("SET", kept[0], "now")
	if got, want := nextPush(t, r), `push["invalidate", ["`+kept[0]+`"]]`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	// 0 lifts the limit.
	w.do("CONFIG", "SET", "tracking-table-max-keys", "0")
	for i := range 30 {
		r.do("GET", "more:"+strconv.Itoa(i))
	}
	if stats := formatReply(w.do("INFO", "stats")); !strings.Contains(stats, `tracking_total_keys:39\r\n`) {
		t.Fatalf("INFO stats without a limit: %s", stats)
	}
}

// Many tracking clients on every loop, many writers: every reader that
// read a key before it was written is told, exactly once per read, under
// -race.
func TestTrackingManyClients(t *testing.T) {
	for _, st := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		t.Run(st.String(), func(t *testing.T) { testTrackingManyClients(t, st) })
	}
}

func testTrackingManyClients(t *testing.T, st shard.Strategy) {
	ts := startServer(t, withStrategy(st), withNetConfig(func(nc *netloop.Config) { nc.EventLoops = 4 }))
	const readers, keys = 16, 50
	conns := make([]*rawConn, readers)
	for i := range conns {
		conns[i] = trackingConn(t, ts.Addr)
		for k := range keys {
			conns[i].write(multibulk("GET", "m:"+strconv.Itoa(k)))
		}
		for range keys {
			conns[i].read()
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dialRaw(t, ts.Addr)
			for k := w; k < keys; k += 4 {
				c.do("SET", "m:"+strconv.Itoa(k), "x")
			}
		}()
	}
	wg.Wait()
	for i, c := range conns {
		seen := map[string]int{}
		for len(seen) < keys {
			v := c3read(t, c)
			for _, k := range v.Elems[1].Elems {
				seen[string(k.Str)]++
			}
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("reader %d: %s invalidated %d times", i, k, n)
			}
		}
		noPush(t, c)
	}
}
