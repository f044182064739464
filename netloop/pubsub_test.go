package netloop_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/glob"
	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/netloop"
)

// ---- exact bytes against redis-server -------------------------------------------

// psStep is one command of a Pub/Sub script, sent on one of the connections
// a, b and c.
type psStep struct {
	conn string
	args []string
	// vary: the reply differs between servers by design (HELLO's client id);
	// only what the other connections receive is compared.
	vary bool
	// queued: the connection is inside MULTI, where the sentinel PING would
	// be queued too: read one reply and sync nobody.
	queued bool
}

// pubsubScript exercises the confirmations, messages, subscribed-mode
// restrictions and PUBSUB replies in RESP2 and RESP3. It avoids what Redis
// orders by hash (several patterns matching one publish for one client,
// UNSUBSCRIBE of several channels at once, PUBSUB CHANNELS listing several).
var pubsubScript = []psStep{
	// Nothing subscribed yet.
	{conn: "a", args: []string{"UNSUBSCRIBE"}},
	{conn: "a", args: []string{"PUNSUBSCRIBE"}},
	{conn: "a", args: []string{"SUNSUBSCRIBE"}},
	{conn: "a", args: []string{"UNSUBSCRIBE", "x", "y"}},
	{conn: "a", args: []string{"GET", "k"}},
	// RESP2 subscribed mode.
	{conn: "a", args: []string{"SUBSCRIBE", "news", "chat"}},
	{conn: "a", args: []string{"SUBSCRIBE", "news"}},
	{conn: "a", args: []string{"PSUBSCRIBE", "n*", "x?", "n*"}},
	{conn: "a", args: []string{"GET", "k"}},
	{conn: "a", args: []string{"CLIENT", "ID"}},
	{conn: "a", args: []string{"PUBLISH", "news", "x"}},
	{conn: "a", args: []string{"PUBSUB", "NUMPAT"}},
	{conn: "a", args: []string{"NOSUCHCOMMAND", "x"}},
	{conn: "a", args: []string{"GET"}},
	{conn: "a", args: []string{"PING"}},
	{conn: "a", args: []string{"PING", "hello"}},
	{conn: "b", args: []string{"PUBLISH", "news", "hello"}},
	{conn: "b", args: []string{"PUBLISH", "chat", ""}},
	{conn: "b", args: []string{"PUBLISH", "nope", "binary\r\n\x00"}},
	{conn: "b", args: []string{"PUBLISH", "xy", "pattern x?"}},
	{conn: "b", args: []string{"PUBLISH", "nobody", "hears"}},
	{conn: "b", args: []string{"PUBLISH", "other", "m"}},
	{conn: "b", args: []string{"PUBSUB", "NUMSUB", "news", "chat", "none"}},
	{conn: "b", args: []string{"PUBSUB", "NUMSUB"}},
	{conn: "b", args: []string{"PUBSUB", "NUMPAT"}},
	{conn: "b", args: []string{"PUBSUB", "CHANNELS", "ne*"}},
	{conn: "b", args: []string{"PUBSUB", "CHANNELS", "zz*"}},
	{conn: "b", args: []string{"PUBSUB", "CHANNELS", "a", "b"}},
	{conn: "b", args: []string{"PUBSUB", "channels", "a", "b"}},
	{conn: "b", args: []string{"PUBSUB", "NUMPAT", "x"}},
	{conn: "b", args: []string{"PUBSUB", "FOO"}},
	{conn: "b", args: []string{"PUBSUB"}},
	{conn: "b", args: []string{"PUBSUB", "HELP"}},
	{conn: "b", args: []string{"PUBLISH", "news"}},
	{conn: "a", args: []string{"UNSUBSCRIBE", "news", "nothing", "news"}},
	{conn: "b", args: []string{"PUBLISH", "news", "pattern only"}},
	{conn: "a", args: []string{"PUNSUBSCRIBE", "nope", "x?"}},
	{conn: "a", args: []string{"SSUBSCRIBE", "s1", "s2"}},
	{conn: "b", args: []string{"SPUBLISH", "s1", "sharded"}},
	{conn: "b", args: []string{"SPUBLISH", "s3", "nobody"}},
	{conn: "b", args: []string{"PUBLISH", "s1", "not sharded"}},
	{conn: "b", args: []string{"PUBSUB", "SHARDNUMSUB", "s1", "s3"}},
	{conn: "b", args: []string{"PUBSUB", "SHARDCHANNELS", "*1"}},
	{conn: "a", args: []string{"SUNSUBSCRIBE", "s2"}},
	{conn: "a", args: []string{"SUNSUBSCRIBE"}},
	{conn: "a", args: []string{"PUNSUBSCRIBE"}},
	{conn: "a", args: []string{"GET", "k"}},
	{conn: "a", args: []string{"UNSUBSCRIBE"}},
	{conn: "a", args: []string{"GET", "k"}},
	{conn: "a", args: []string{"PSUBSCRIBE", "p1", "p2", "p3"}},
	{conn: "a", args: []string{"PUNSUBSCRIBE"}},
	// RESP3: anything goes while subscribed; messages are pushes.
	{conn: "c", args: []string{"HELLO", "3"}, vary: true},
	{conn: "c", args: []string{"SUBSCRIBE", "r3"}},
	{conn: "c", args: []string{"PSUBSCRIBE", "r*"}},
	{conn: "c", args: []string{"GET", "k"}},
	{conn: "c", args: []string{"PING"}},
	{conn: "c", args: []string{"PUBLISH", "r3", "self"}},
	{conn: "b", args: []string{"PUBLISH", "r3", "from b"}},
	{conn: "b", args: []string{"PUBLISH", "r9", "pattern"}},
	{conn: "c", args: []string{"PUBSUB", "NUMSUB", "r3"}},
	{conn: "c", args: []string{"UNSUBSCRIBE"}},
	{conn: "c", args: []string{"UNSUBSCRIBE"}},
	{conn: "c", args: []string{"PUNSUBSCRIBE", "r*", "r*"}},
	{conn: "c", args: []string{"SSUBSCRIBE", "q"}},
	{conn: "c", args: []string{"SPUBLISH", "q", "self"}},
	{conn: "c", args: []string{"SUNSUBSCRIBE"}},
	{conn: "c", args: []string{"SUNSUBSCRIBE"}},
	// RESP3 subscribed, then back to RESP2: the restrictions apply again.
	{conn: "c", args: []string{"SUBSCRIBE", "back"}},
	{conn: "c", args: []string{"HELLO", "2"}, vary: true},
	{conn: "c", args: []string{"GET", "k"}},
	{conn: "c", args: []string{"PING"}},
	{conn: "b", args: []string{"PUBLISH", "back", "resp2 again"}},
	{conn: "c", args: []string{"RESET"}},
	{conn: "c", args: []string{"GET", "k"}},
	{conn: "b", args: []string{"PUBLISH", "back", "nobody"}},
	// RESP2 RESET and QUIT while subscribed.
	{conn: "a", args: []string{"SUBSCRIBE", "z"}},
	{conn: "a", args: []string{"RESET"}},
	{conn: "a", args: []string{"PING"}},
	{conn: "b", args: []string{"PUBLISH", "z", "gone"}},
	{conn: "a", args: []string{"SUBSCRIBE", "z"}},
	{conn: "a", args: []string{"QUIT"}},
}

// pubsubTranscript runs script on three fresh connections to addr. After
// every step each connection gets PING <sentinel>, and everything it received
// up to the sentinel's reply is recorded, byte for byte: so messages are
// compared where they fall between replies, and PING in subscribed mode too.
func pubsubTranscript(t *testing.T, addr string, script []psStep) []string {
	t.Helper()
	names := []string{"a", "b", "c"}
	conns := map[string]*transcriptConn{}
	for _, n := range names {
		conns[n] = dialTranscript(t, addr)
	}
	closed := map[string]bool{}
	var out []string
	for i, st := range script {
		conns[st.conn].write(multibulk(st.args...))
		if st.queued {
			got, _ := conns[st.conn].readRaw()
			out = append(out, fmt.Sprintf("%d %s %q -> %s: %q", i, st.conn, st.args, st.conn, got))
			continue
		}
		// The sender first: once its reply is in, whatever it published is
		// in the other connections' output (Redis) or mailboxes (svcdb).
		order := append([]string{st.conn}, slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == st.conn })...)
		for _, n := range order {
			r := conns[n]
			if closed[n] {
				continue
			}
			if st.args[0] == "QUIT" && n == st.conn {
				got, _ := r.readRaw()
				r.expectClosed()
				closed[n] = true
				out = append(out, fmt.Sprintf("%d %s %q -> %s: %q, closed", i, st.conn, st.args, n, got))
				continue
			}
			sentinel := "sync-" + strconv.Itoa(i)
			r.write(multibulk("PING", sentinel))
			var got []byte
			for {
				raw, v := r.readRaw()
				if isSentinel(v, sentinel) {
					got = append(got, "<sync>"...)
					got = append(got, raw...)
					break
				}
				got = append(got, raw...)
			}
			if st.vary && n == st.conn {
				got = []byte("(varies)")
			}
			out = append(out, fmt.Sprintf("%d %s %q -> %s: %q", i, st.conn, st.args, n, got))
		}
	}
	return out
}

func isSentinel(v resp.Value, sentinel string) bool {
	if v.Type == '$' && string(v.Str) == sentinel {
		return true
	}
	return v.Type == '*' && len(v.Elems) == 2 && string(v.Elems[0].Str) == "pong" && string(v.Elems[1].Str) == sentinel
}

// transcriptConn is a rawConn that keeps every byte it receives, so each
// reply can be recorded exactly as sent.
type transcriptConn struct {
	*rawConn
	rec  bytes.Buffer // everything read from the socket
	used int          // how much of rec the replies read so far took
}

func dialTranscript(t *testing.T, addr string) *transcriptConn {
	tc := &transcriptConn{rawConn: dialRaw(t, addr)}
	tc.rd = bufio.NewReaderSize(io.TeeReader(tc.c, &tc.rec), 1<<16)
	return tc
}

// readRaw returns the next reply's bytes as sent, and its value.
func (tc *transcriptConn) readRaw() ([]byte, resp.Value) {
	tc.t.Helper()
	v := tc.read()
	end := tc.rec.Len() - tc.rd.Buffered() - len(tc.buf)
	raw := bytes.Clone(tc.rec.Bytes()[tc.used:end])
	tc.used = end
	return raw, v
}

func TestPubSubExactBytesAgainstRedis(t *testing.T) {
	redisAddr := redistest.Start(t)
	ts := startServer(t)
	want := pubsubTranscript(t, redisAddr, pubsubScript)
	got := pubsubTranscript(t, ts.Addr, pubsubScript)
	if len(got) != len(want) {
		t.Fatalf("transcripts differ in length: svcdb %d, redis %d", len(got), len(want))
	}
	bad := 0
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("differs from redis-server:\n svcdb: %s\n redis: %s", got[i], want[i])
			if bad++; bad > 10 {
				t.Fatal("too many differences")
			}
		}
	}
}

// TestPubSubInMultiAgainstRedis: Pub/Sub commands queued in MULTI. A RESP3
// client's message to itself lands inside EXEC's array, as in Redis 7.0
// (pushes are out of band), and SSUBSCRIBE is refused there.
func TestPubSubInMultiAgainstRedis(t *testing.T) {
	script := []psStep{
		{conn: "a", args: []string{"HELLO", "3"}, vary: true},
		{conn: "a", args: []string{"SUBSCRIBE", "x"}},
		{conn: "a", args: []string{"MULTI"}, queued: true},
		{conn: "a", args: []string{"PUBLISH", "x", "to myself"}, queued: true},
		{conn: "a", args: []string{"PING"}, queued: true},
		{conn: "a", args: []string{"EXEC"}},
		{conn: "a", args: []string{"MULTI"}, queued: true},
		{conn: "a", args: []string{"SSUBSCRIBE", "q"}, queued: true},
		{conn: "a", args: []string{"SUBSCRIBE", "w"}, queued: true},
		{conn: "a", args: []string{"EXEC"}},
		{conn: "b", args: []string{"MULTI"}, queued: true},
		{conn: "b", args: []string{"PUBLISH", "x", "from b"}, queued: true},
		{conn: "b", args: []string{"PUBLISH", "w", "from b"}, queued: true},
		{conn: "b", args: []string{"EXEC"}},
		// RESP2: SUBSCRIBE inside MULTI enters subscribed mode after EXEC.
		{conn: "c", args: []string{"MULTI"}, queued: true},
		{conn: "c", args: []string{"SUBSCRIBE", "y"}, queued: true},
		{conn: "c", args: []string{"GET", "k"}, queued: true},
		{conn: "c", args: []string{"EXEC"}},
		{conn: "c", args: []string{"MULTI"}},
		{conn: "c", args: []string{"UNSUBSCRIBE"}},
		{conn: "c", args: []string{"MULTI"}, queued: true},
		{conn: "c", args: []string{"PUBLISH", "y", "z"}, queued: true},
		{conn: "c", args: []string{"DISCARD"}},
	}
	want := pubsubTranscript(t, redistest.Start(t), script)
	got := pubsubTranscript(t, startServer(t).Addr, script)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("differs from redis-server:\n svcdb: %s\n redis: %s", got[i], want[i])
		}
	}
}

// ---- many publishers and subscribers ----------------------------------------------

func TestPubSubManyPublishersAndSubscribers(t *testing.T) {
	ts := startServer(t, withShards(4))
	ctx := testCtx(t, 120*time.Second)
	const publishers, perPublisher, pipeline = 4, 1500, 50
	channels := []string{"ch0", "ch1", "ch2", "ch3"}
	type subSpec struct {
		name     string
		protocol int
		channels []string
		patterns []string
	}
	specs := []subSpec{
		{"resp2-channels", 2, []string{"ch0", "ch1"}, nil},
		{"resp3-pattern", 3, nil, []string{"ch*"}},
		{"resp2-both", 2, []string{"ch2"}, []string{"ch[23]", "c?3"}},
		{"resp3-all", 3, channels, nil},
		{"resp3-both", 3, []string{"ch3"}, []string{"*"}},
	}
	// matches lists the subscriptions of spec a message on ch reaches.
	matches := func(sp subSpec, ch string) []string {
		var keys []string
		for _, c := range sp.channels {
			if c == ch {
				keys = append(keys, "c:"+c)
			}
		}
		for _, p := range sp.patterns {
			if glob.Match([]byte(p), []byte(ch), false) {
				keys = append(keys, "p:"+p)
			}
		}
		return keys
	}
	receivers := map[string]int64{}
	for _, ch := range channels {
		for _, sp := range specs {
			receivers[ch] += int64(len(matches(sp, ch)))
		}
	}

	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(specs))
	var ready sync.WaitGroup
	for _, sp := range specs {
		rdb := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: sp.protocol})
		t.Cleanup(func() { rdb.Close() })
		ps := rdb.Subscribe(ctx)
		t.Cleanup(func() { ps.Close() })
		if len(sp.channels) > 0 {
			if err := ps.Subscribe(ctx, sp.channels...); err != nil {
				t.Fatal(err)
			}
		}
		if len(sp.patterns) > 0 {
			if err := ps.PSubscribe(ctx, sp.patterns...); err != nil {
				t.Fatal(err)
			}
		}
		// Wait for every confirmation, so no message is published before.
		for range len(sp.channels) + len(sp.patterns) {
			if _, err := ps.Receive(ctx); err != nil {
				t.Fatalf("%s: %v", sp.name, err)
			}
		}
		expect := map[string]int{}
		for p := range publishers {
			for i := range perPublisher {
				for _, k := range matches(sp, channels[(p+i)%len(channels)]) {
					expect[fmt.Sprintf("%s/%d", k, p)]++
				}
			}
		}
		total := 0
		for _, n := range expect {
			total += n
		}
		ready.Add(1)
		go func() {
			ready.Done()
			last := map[string]int{}
			got := map[string]int{}
			fail := func(format string, args ...any) {
				results <- result{sp.name, fmt.Errorf(format, args...)}
			}
			for n := 0; n < total; n++ {
				m, err := ps.ReceiveTimeout(ctx, 20*time.Second)
				if err != nil {
					fail("after %d of %d messages: %v", n, total, err)
					return
				}
				msg, ok := m.(*redis.Message)
				if !ok {
					n--
					continue // a pong of go-redis' health check
				}
				var p, i int
				if _, err := fmt.Sscanf(msg.Payload, "%d:%d", &p, &i); err != nil {
					fail("payload %q: %v", msg.Payload, err)
					return
				}
				if ch := channels[(p+i)%len(channels)]; msg.Channel != ch {
					fail("message %q on %s, published on %s", msg.Payload, msg.Channel, ch)
					return
				}
				k := "c:" + msg.Channel
				if msg.Pattern != "" {
					k = "p:" + msg.Pattern
				}
				k = fmt.Sprintf("%s/%d", k, p)
				if prev, seen := last[k]; seen && i <= prev {
					fail("%s: message %d after %d: out of publish order or twice", k, i, prev)
					return
				}
				last[k] = i
				got[k]++
				if got[k] > expect[k] {
					fail("%s: more messages than published (%d)", k, got[k])
					return
				}
			}
			for k, n := range expect {
				if got[k] != n {
					fail("%s: got %d messages, want %d", k, got[k], n)
					return
				}
			}
			// Nothing more may arrive.
			if m, err := ps.ReceiveTimeout(ctx, 200*time.Millisecond); err == nil {
				if msg, ok := m.(*redis.Message); ok {
					fail("unexpected extra message %+v", msg)
					return
				}
			}
			results <- result{sp.name, nil}
		}()
	}
	ready.Wait()

	admin := dialRaw(t, ts.Addr)
	if v := admin.do("PUBSUB", "NUMPAT"); v.Int != 4 {
		t.Fatalf("PUBSUB NUMPAT = %v, want 4", v)
	}

	var pubWG sync.WaitGroup
	pubErr := make(chan error, publishers)
	start := time.Now()
	for p := range publishers {
		pubWG.Add(1)
		go func() {
			defer pubWG.Done()
			rdb := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: 2 + p%2})
			defer rdb.Close()
			for i := 0; i < perPublisher; i += pipeline {
				pipe := rdb.Pipeline()
				cmds := make([]*redis.IntCmd, 0, pipeline)
				for j := i; j < min(i+pipeline, perPublisher); j++ {
					cmds = append(cmds, pipe.Publish(ctx, channels[(p+j)%len(channels)], fmt.Sprintf("%d:%d", p, j)))
				}
				if _, err := pipe.Exec(ctx); err != nil {
					pubErr <- err
					return
				}
				for k, c := range cmds {
					ch := channels[(p+i+k)%len(channels)]
					if c.Val() != receivers[ch] {
						pubErr <- fmt.Errorf("PUBLISH %s returned %d, want %d", ch, c.Val(), receivers[ch])
						return
					}
				}
			}
		}()
	}
	pubWG.Wait()
	close(pubErr)
	for err := range pubErr {
		t.Fatal(err)
	}
	t.Logf("%d publishers × %d messages published in %v", publishers, perPublisher, time.Since(start))
	for range specs {
		r := <-results
		if r.err != nil {
			t.Errorf("%s: %v", r.name, r.err)
		}
	}
}

// ---- slow subscribers ------------------------------------------------------------

// lockedBuffer collects log output from the loops.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dialSmallWindow connects with a 4 KiB receive buffer (no autotuning), so a
// client that does not read fills the server's side quickly.
func dialSmallWindow(t *testing.T, addr string) *rawConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return errors.Join(err, serr)
	}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c, rd: bufio.NewReaderSize(c, 1<<16)}
}

// readAllUntilClosed drains c until the server closes it.
func readAllUntilClosed(c net.Conn, d time.Duration) error {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	if err == nil || errors.Is(err, syscall.ECONNRESET) {
		return nil
	}
	return err
}

// fastSubscriber reads messages on r until n have arrived, checking they are
// "message" pushes on channel with payloads 0..n-1 in order; received counts
// them.
func fastSubscriber(r *rawConn, channel string, n int, received *atomic.Int64, done chan<- error) {
	for i := 0; i < n; i++ {
		v, err := r.tryRead(30 * time.Second)
		if err != nil {
			done <- fmt.Errorf("after %d messages: %v", i, err)
			return
		}
		if len(v.Elems) != 3 || string(v.Elems[0].Str) != "message" || string(v.Elems[1].Str) != channel {
			done <- fmt.Errorf("message %d: unexpected %v", i, v)
			return
		}
		if got, _ := strconv.Atoi(strings.SplitN(string(v.Elems[2].Str), ":", 2)[0]); got != i {
			done <- fmt.Errorf("message %d: payload %.20q", i, v.Elems[2].Str)
			return
		}
		received.Add(1)
	}
	done <- nil
}

func TestPubSubSlowSubscriberHardLimit(t *testing.T) {
	var logs lockedBuffer
	ts := startServer(t, withNetConfig(func(nc *netloop.Config) {
		nc.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	}))
	admin := dialRaw(t, ts.Addr)
	if v := admin.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 64kb 32kb 1"); string(v.Str) != "OK" {
		t.Fatalf("CONFIG SET: %v", v)
	}
	slow := dialSmallWindow(t, ts.Addr)
	slow.do("SUBSCRIBE", "flood") // then never reads again
	slowID := admin.do("CLIENT", "LIST", "TYPE", "pubsub")
	fast := dialRaw(t, ts.Addr)
	fast.do("SUBSCRIBE", "flood")
	fast2 := dialRaw(t, ts.Addr)
	fast2.do("HELLO", "3")
	fast2.do("SUBSCRIBE", "flood")
	if !strings.Contains(string(slowID.Str), "sub=1") {
		t.Fatalf("CLIENT LIST TYPE pubsub: %s", slowID.Str)
	}

	// The fast subscribers read as fast as they can; the publisher stays at
	// most window messages ahead of them (a subscriber that falls further
	// behind than the limit is rightly closed too: -race makes the test's
	// readers slow). The slow one never reads.
	const total, batch, window = 20000, 50, 150
	payload := strings.Repeat("x", 1000)
	done := make(chan error, 2)
	var got1, got2 atomic.Int64
	go fastSubscriber(fast, "flood", total, &got1, done)
	go fastSubscriber(fast2, "flood", total, &got2, done)

	pub := dialRaw(t, ts.Addr)
	start := time.Now()
	firstTwo := -1 // first PUBLISH the slow subscriber no longer counted in
	var slowest time.Duration
	for i := 0; i < total; i += batch {
		var b strings.Builder
		for j := i; j < i+batch; j++ {
			b.WriteString(multibulk("PUBLISH", "flood", strconv.Itoa(j)+":"+payload))
		}
		for deadline := time.Now().Add(30 * time.Second); min(got1.Load(), got2.Load()) < int64(i-window); {
			if time.Now().After(deadline) {
				t.Fatalf("fast subscribers stuck at %d and %d of %d messages; log:\n%s", got1.Load(), got2.Load(), i, logs.String())
			}
			time.Sleep(100 * time.Microsecond)
		}
		t0 := time.Now()
		pub.write(b.String())
		for j := i; j < i+batch; j++ {
			v := pub.read()
			switch {
			case v.Type != ':' || v.Int < 2 || v.Int > 3:
				t.Fatalf("PUBLISH %d: %v; log:\n%s", j, v, logs.String())
			case v.Int == 2 && firstTwo < 0:
				firstTwo = j
			case v.Int == 3 && firstTwo >= 0:
				t.Fatalf("PUBLISH %d counted the closed subscriber again", j)
			}
		}
		slowest = max(slowest, time.Since(t0))
	}
	t.Logf("published %d × 1 KB in %v (slowest batch of %d: %v); slow subscriber dropped after %d messages",
		total, time.Since(start), batch, slowest, firstTwo)
	if firstTwo < 0 {
		t.Fatal("the slow subscriber was never disconnected")
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("fast subscriber: %v", err)
		}
	}
	if err := readAllUntilClosed(slow.c, 20*time.Second); err != nil {
		t.Fatalf("slow subscriber's connection: %v", err)
	}
	if v := admin.do("PUBSUB", "NUMSUB", "flood"); v.Elems[1].Int != 2 {
		t.Fatalf("PUBSUB NUMSUB flood: %v", v)
	}
	log := logs.String()
	if !regexp.MustCompile(`Client id=\d+ addr=\S+ .*flags=P .*sub=1 psub=0 ssub=0 .* scheduled to be closed ASAP for overcoming of output buffer limits\.`).MatchString(log) {
		t.Fatalf("log does not say why the client was closed:\n%s", log)
	}
	if n := strings.Count(log, "scheduled to be closed ASAP"); n != 1 {
		t.Fatalf("logged %d times, want once:\n%s", n, log)
	}
}

// TestPubSubPublisherNeverWaits: with no limit, a subscriber that never reads
// holds everything published to it (as in Redis), and the publisher is not
// slowed: it never waits on a subscriber's socket.
func TestPubSubPublisherNeverWaits(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	admin.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
	slow := dialSmallWindow(t, ts.Addr)
	slow.do("SUBSCRIBE", "pile")
	pub := dialRaw(t, ts.Addr)
	const total, batch = 20000, 1000
	payload := strings.Repeat("z", 1000)
	start := time.Now()
	for i := 0; i < total; i += batch {
		var b strings.Builder
		for range batch {
			b.WriteString(multibulk("PUBLISH", "pile", payload))
		}
		pub.write(b.String())
		for range batch {
			if v := pub.read(); v.Int != 1 {
				t.Fatalf("PUBLISH: %v", v)
			}
		}
	}
	t.Logf("published %d × 1 KB to a subscriber that does not read in %v", total, time.Since(start))
	list := string(admin.do("CLIENT", "LIST", "TYPE", "pubsub").Str)
	m := regexp.MustCompile(` omem=(\d+) `).FindStringSubmatch(list)
	if m == nil {
		t.Fatalf("CLIENT LIST: %s", list)
	}
	// What the kernel's socket buffers took is not the server's; the rest is.
	if omem, _ := strconv.Atoi(m[1]); omem < 10<<20 {
		t.Fatalf("omem=%d: the unread messages are not accounted", omem)
	}
}

func TestPubSubSlowSubscriberSoftLimit(t *testing.T) {
	ts := startServer(t)
	admin := dialRaw(t, ts.Addr)
	admin.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 16kb 1")
	slow := dialSmallWindow(t, ts.Addr)
	slow.do("SUBSCRIBE", "soft")
	pub := dialRaw(t, ts.Addr)
	payload := strings.Repeat("y", 1000)
	// A burst fills the socket buffers and passes the soft limit; a trickle
	// keeps it above until the soft seconds have passed.
	var b strings.Builder
	for range 8000 {
		b.WriteString(multibulk("PUBLISH", "soft", payload))
	}
	// The soft limit may be reached at any point of the burst, so the time it
	// must hold for is measured from before the burst.
	start := time.Now()
	pub.write(b.String())
	for range 8000 {
		if v := pub.read(); v.Int != 1 {
			t.Fatalf("PUBLISH during the burst: %v (closed before the soft seconds?)", v)
		}
	}
	eventually(t, 10*time.Second-time.Since(start), func() bool {
		return pub.do("PUBLISH", "soft", payload).Int == 0
	}, "still subscribed 10 s past the soft limit of 1 s")
	if el := time.Since(start); el < 900*time.Millisecond {
		t.Fatalf("closed after %v, before the soft limit's 1 s", el)
	}
	if err := readAllUntilClosed(slow.c, 20*time.Second); err != nil {
		t.Fatal(err)
	}
}

// ---- commands and observability ---------------------------------------------------

func TestPubSubObservability(t *testing.T) {
	ts := startServer(t)
	a := dialRaw(t, ts.Addr)
	a.do("CLIENT", "SETNAME", "subscriber")
	a.write(multibulk("SUBSCRIBE", "c1", "c2", "c3") + multibulk("PSUBSCRIBE", "p*") + multibulk("SSUBSCRIBE", "s1"))
	for range 5 {
		a.read()
	}
	b := dialRaw(t, ts.Addr)
	b.do("HELLO", "3")
	b.do("SUBSCRIBE", "c1")
	adm := dialRaw(t, ts.Addr)

	wantInfo := func(channels, patterns, shard int) {
		t.Helper()
		info := string(adm.do("INFO", "stats").Str)
		for _, f := range []string{
			fmt.Sprintf("pubsub_channels:%d\r\n", channels),
			fmt.Sprintf("pubsub_patterns:%d\r\n", patterns),
			fmt.Sprintf("pubsubshard_channels:%d\r\n", shard),
		} {
			if !strings.Contains(info, f) {
				t.Errorf("INFO stats lacks %q:\n%s", f, info)
			}
		}
	}
	wantInfo(3, 1, 1)
	list := string(adm.do("CLIENT", "LIST").Str)
	if !regexp.MustCompile(`name=subscriber .*flags=P db=0 sub=3 psub=1 ssub=1 `).MatchString(list) {
		t.Errorf("CLIENT LIST:\n%s", list)
	}
	if !regexp.MustCompile(`flags=N db=0 sub=0 psub=0 ssub=0 .*cmd=client\|list`).MatchString(list) {
		t.Errorf("CLIENT LIST (the admin):\n%s", list)
	}
	if got := strings.Count(string(adm.do("CLIENT", "LIST", "TYPE", "pubsub").Str), "\n"); got != 2 {
		t.Errorf("CLIENT LIST TYPE pubsub: %d clients, want 2", got)
	}
	if got := string(adm.do("CLIENT", "LIST", "TYPE", "normal").Str); strings.Count(got, "\n") != 1 || !strings.Contains(got, "cmd=client|list") {
		t.Errorf("CLIENT LIST TYPE normal: %s", got)
	}
	if got := string(b.do("CLIENT", "INFO").Str); !strings.Contains(got, "flags=P db=0 sub=1 psub=0 ssub=0") || !strings.Contains(got, "resp=3") {
		t.Errorf("CLIENT INFO (RESP3 subscriber): %s", got)
	}
	if v := adm.do("PUBSUB", "CHANNELS"); v.String() != `["c1" "c2" "c3"]` {
		t.Errorf("PUBSUB CHANNELS: %v", v)
	}

	// Unsubscribing everything in subscription order, with counts going down.
	a.write(multibulk("UNSUBSCRIBE"))
	for i, ch := range []string{"c1", "c2", "c3"} {
		v := a.read()
		if string(v.Elems[0].Str) != "unsubscribe" || string(v.Elems[1].Str) != ch || v.Elems[2].Int != int64(2-i+1) {
			t.Errorf("UNSUBSCRIBE confirmation %d: %v", i, v)
		}
	}

	// A closed subscriber is forgotten.
	b.c.Close()
	eventually(t, 5*time.Second, func() bool {
		return adm.do("PUBSUB", "NUMSUB", "c1").Elems[1].Int == 0
	}, "the closed subscriber still counts")

	// CLIENT KILL TYPE pubsub kills subscribers only.
	if v := adm.do("CLIENT", "KILL", "TYPE", "pubsub"); v.Int != 1 {
		t.Errorf("CLIENT KILL TYPE pubsub = %v, want 1", v)
	}
	a.expectClosed()
	if v := adm.do("PUBSUB", "NUMPAT"); v.Int != 0 {
		t.Errorf("PUBSUB NUMPAT after the kill: %v", v)
	}
	wantInfo(0, 0, 0)
}

// TestPubSubNoIdleTimeout: as in Redis, timeout does not close subscribers.
func TestPubSubNoIdleTimeout(t *testing.T) {
	ts := startServer(t)
	adm := dialRaw(t, ts.Addr)
	adm.do("CONFIG", "SET", "timeout", "1")
	sub := dialRaw(t, ts.Addr)
	sub.do("SUBSCRIBE", "quiet")
	idle := dialRaw(t, ts.Addr)
	idle.do("PING")
	idle.expectClosed()
	if v := dialRaw(t, ts.Addr).do("PUBLISH", "quiet", "still here"); v.Int != 1 {
		t.Fatalf("the idle subscriber was closed: PUBLISH = %v", v)
	}
	if v := sub.read(); v.String() != `["message" "quiet" "still here"]` {
		t.Fatalf("message: %v", v)
	}
}

// TestPubSubOrderAroundUnsubscribe: messages published before an UNSUBSCRIBE
// come before its confirmation, and none after.
func TestPubSubOrderAroundUnsubscribe(t *testing.T) {
	ts := startServer(t)
	sub := dialRaw(t, ts.Addr)
	sub.do("SUBSCRIBE", "o")
	pub := dialRaw(t, ts.Addr)
	const n = 20000
	var b strings.Builder
	for i := range n {
		b.WriteString(multibulk("PUBLISH", "o", strconv.Itoa(i)))
	}
	wrote := make(chan error, 1)
	go func() {
		pub.c.SetWriteDeadline(time.Now().Add(20 * time.Second))
		_, err := pub.c.Write([]byte(b.String()))
		wrote <- err
	}()
	next := 0
	for {
		if next == 100 { // unsubscribe while the publisher is busy
			sub.write(multibulk("UNSUBSCRIBE", "o"))
		}
		v := sub.read()
		if string(v.Elems[0].Str) == "unsubscribe" {
			if v.Elems[2].Int != 0 {
				t.Fatalf("confirmation: %v", v)
			}
			break
		}
		if string(v.Elems[2].Str) != strconv.Itoa(next) {
			t.Fatalf("message %d: %v", next, v)
		}
		next++
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	received := 0
	for range n {
		if pub.read().Int == 1 {
			received++
		}
	}
	if received != next {
		t.Fatalf("%d PUBLISH counted the subscriber, it received %d before the confirmation", received, next)
	}
	if v, err := sub.tryRead(200 * time.Millisecond); err == nil {
		t.Fatalf("after the confirmation: %v", v)
	}
	t.Logf("%d of %d messages before the unsubscription", next, n)
}

// TestPubSubGoRedis: go-redis' PubSub in RESP2 and RESP3, including its PING
// while subscribed (RESP2 replies ["pong", msg] in subscribed mode).
func TestPubSubGoRedis(t *testing.T) {
	ts := startServer(t)
	ctx := testCtx(t, 30*time.Second)
	for _, proto := range []int{2, 3} {
		rdb := redis.NewClient(&redis.Options{Addr: ts.Addr, Protocol: proto})
		t.Cleanup(func() { rdb.Close() })
		ps := rdb.PSubscribe(ctx, "gr.*")
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		if err := ps.Ping(ctx, "hi"); err != nil {
			t.Fatalf("RESP%d Ping while subscribed: %v", proto, err)
		}
		if m, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		} else if p, ok := m.(*redis.Pong); !ok || p.Payload != "hi" {
			t.Fatalf("RESP%d: %#v", proto, m)
		}
		if n, err := rdb.Publish(ctx, "gr.x", "payload").Result(); err != nil || n != 1 {
			t.Fatalf("Publish: %d %v", n, err)
		}
		m, err := ps.ReceiveMessage(ctx)
		if err != nil || m.Pattern != "gr.*" || m.Channel != "gr.x" || m.Payload != "payload" {
			t.Fatalf("RESP%d message: %+v %v", proto, m, err)
		}
		if chs, err := rdb.PubSubNumPat(ctx).Result(); err != nil || chs != 1 {
			t.Fatalf("PubSubNumPat: %d %v", chs, err)
		}
		ps.Close()
		eventually(t, 5*time.Second, func() bool { return rdb.PubSubNumPat(ctx).Val() == 0 }, "pattern still counted")
	}
}
