package netloop_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/resp"
	"github.com/svcdb/svcdb/shard"
)

// Ordering, back-pressure and concurrency over real TCP, for both drain
// strategies with 4 shards.

// raceBuild reports whether the test binary was built with -race. Moving
// gigabytes costs about ten times more under the race detector (every copy is
// instrumented), so the volume tests move less there.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

func forStrategies(t *testing.T, f func(t *testing.T, ts *testServer)) {
	for _, st := range []shard.Strategy{shard.RunToCompletion, shard.Dedicated} {
		t.Run(st.String(), func(t *testing.T) {
			f(t, startServer(t, withStrategy(st), withShards(4)))
		})
	}
}

// writeAsync writes s from another goroutine (the server may stop reading
// until we read replies) and returns a function that waits for the write.
func (r *rawConn) writeAsync(s string) (wait func()) {
	done := make(chan error, 1)
	go func() {
		// A bound on a server that stops reading for good, not on its
		// speed: the write can end only when the server has parsed what
		// the replies before it let it parse.
		r.c.SetWriteDeadline(time.Now().Add(5 * time.Minute))
		_, err := io.WriteString(r.c, s)
		done <- err
	}()
	return func() {
		r.t.Helper()
		if err := <-done; err != nil {
			r.t.Fatalf("write: %v", err)
		}
	}
}

func nullOr(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return strconv.Quote(v)
	}
	return "(nil bulk)"
}

func TestPipelineOrder(t *testing.T) {
	forStrategies(t, func(t *testing.T, ts *testServer) {
		c := dialRaw(t, ts.Addr)
		rng := rand.New(rand.NewPCG(1, 2))
		model := map[string]string{}
		var sb strings.Builder
		var wants []string
		key := func(i int) string { return "k_" + strconv.Itoa(i) }
		for i := range 1250 {
			k := key(i % 1000)
			v := strconv.Itoa(i)
			sb.WriteString(multibulk("SET", k, v))
			model[k] = v
			wants = append(wants, `+"OK"`)

			g := key(rng.IntN(1000))
			sb.WriteString(multibulk("GET", g))
			wants = append(wants, nullOr(model, g))

			ck := "c_" + strconv.Itoa(i%37)
			n, _ := strconv.Atoi(model[ck])
			model[ck] = strconv.Itoa(n + 1)
			sb.WriteString(multibulk("INCR", ck))
			wants = append(wants, "(integer) "+model[ck])

			a, b, d := key(rng.IntN(1000)), key(rng.IntN(1000)), ck
			sb.WriteString(multibulk("MGET", a, b, d, "nokey"))
			wants = append(wants, "["+nullOr(model, a)+" "+nullOr(model, b)+" "+nullOr(model, d)+" (nil bulk)]")
		}
		if len(wants) != 5000 {
			t.Fatalf("%d commands", len(wants))
		}
		wait := c.writeAsync(sb.String()) // one write of all 5000 commands
		for i, w := range wants {
			if got := c.read().String(); got != w {
				t.Fatalf("reply %d: got %s, want %s", i, got, w)
			}
		}
		wait()
		if v, err := c.tryRead(50 * time.Millisecond); err == nil {
			t.Fatalf("extra reply %s", v)
		}
		want(t, c.do("DBSIZE"), fmt.Sprintf("(integer) %d", len(model)))
	})
}

func TestPipelineConcurrentClients(t *testing.T) {
	forStrategies(t, func(t *testing.T, ts *testServer) {
		const clients, perClient = 8, 2000
		var wg sync.WaitGroup
		incrs := make([][]int64, clients)
		errs := make(chan error, 2*clients) // a read and a write error each
		for ci := range clients {
			c := dialRaw(t, ts.Addr)
			wg.Go(func() {
				var sb strings.Builder
				for j := range perClient {
					sb.WriteString(multibulk("INCR", "shared"))
					own := fmt.Sprintf("own:%d:%d", ci, j%100)
					sb.WriteString(multibulk("SET", own, fmt.Sprintf("%d-%d", ci, j)))
					sb.WriteString(multibulk("GET", own))
				}
				done := make(chan error, 1)
				go func() {
					c.c.SetWriteDeadline(time.Now().Add(60 * time.Second))
					_, err := io.WriteString(c.c, sb.String())
					done <- err
				}()
				defer func() {
					if err := <-done; err != nil {
						errs <- fmt.Errorf("client %d writing the pipeline: %v", ci, err)
					}
				}()
				last := int64(0)
				for j := range perClient {
					vs := make([]resp.Value, 3)
					for x := range vs {
						v, err := c.tryRead(20 * time.Second)
						if err != nil {
							errs <- fmt.Errorf("client %d command %d: %v", ci, 3*j+x, err)
							return
						}
						vs[x] = v
					}
					if vs[0].Type != ':' || vs[0].Int <= last {
						errs <- fmt.Errorf("client %d INCR %d: %s after %d", ci, j, vs[0], last)
						return
					}
					last = vs[0].Int
					incrs[ci] = append(incrs[ci], last)
					wantV := fmt.Sprintf("%d-%d", ci, j)
					if vs[1].String() != `+"OK"` || vs[2].Type != '$' || string(vs[2].Str) != wantV {
						errs <- fmt.Errorf("client %d step %d: SET %s, GET %s, want %q", ci, j, vs[1], vs[2], wantV)
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
		want(t, c.do("GET", "shared"), `"16000"`)
		// INCR is atomic: every value from 1 to 16000 was handed out once.
		seen := make([]bool, clients*perClient+1)
		for _, vs := range incrs {
			for _, v := range vs {
				if v < 1 || v > clients*perClient || seen[v] {
					t.Fatalf("INCR value %d out of range or seen twice", v)
				}
				seen[v] = true
			}
		}
	})
}

// readBulkInto reads one "$<n>\r\n<payload>\r\n" reply into buf (grown as
// needed) and returns the payload, or the whole reply line if it is not a bulk.
func readBulkInto(rd *bufio.Reader, buf []byte) ([]byte, string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, line, err
	}
	if len(line) < 3 || line[0] != '$' {
		return nil, line, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(line[1:], "\r\n"))
	if err != nil || n < 0 {
		return nil, line, nil
	}
	if cap(buf) < n+2 {
		buf = make([]byte, n+2)
	}
	buf = buf[:n+2]
	if _, err := io.ReadFull(rd, buf); err != nil {
		return nil, line, err
	}
	if buf[n] != '\r' || buf[n+1] != '\n' {
		return nil, line, fmt.Errorf("bulk of %d bytes not followed by CRLF", n)
	}
	return buf[:n], line, nil
}

// stallTimeout is how long TestPipelineSlowReader waits for the next reply
// before calling the connection stalled: a bound on something that must
// happen, generous enough for a loaded machine under the race detector.
const stallTimeout = 30 * time.Second

func TestPipelineSlowReader(t *testing.T) {
	forStrategies(t, func(t *testing.T, ts *testServer) {
		const valueSize = 100 << 10
		gets := 20000 // 2 GB of replies
		if raceBuild() {
			gets = 5000 // 500 MB: still 500 times the output soft limit
		}
		big := bytes.Repeat([]byte("0123456789abcdef"), valueSize/16)
		admin := dialRaw(t, ts.Addr)
		want(t, admin.do("SET", "big", string(big)), `+"OK"`)
		baseRSS := infoInt(t, admin.info("memory"), "used_memory_rss")

		// 20000 GET big (2 GB of replies) in one go, with an ECHO of the
		// position every 100 commands to check the order, and nothing read.
		slow := dialRaw(t, ts.Addr)
		slowID := slow.id()
		var sb strings.Builder
		for i := range gets {
			sb.WriteString("*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n")
			if i%100 == 99 {
				sb.WriteString(multibulk("ECHO", strconv.Itoa(i)))
			}
		}
		wait := slow.writeAsync(sb.String())

		// The server stops producing for it: its output waits in the socket
		// buffers and the connection's outbound buffer, the rest of its input
		// stays unparsed.
		var line map[string]string
		eventually(t, 10*time.Second, func() bool {
			line = admin.clientList("ID", slowID)[slowID]
			obl, _ := strconv.Atoi(line["obl"])
			qbuf, _ := strconv.Atoi(line["qbuf"])
			return obl > 0 && qbuf > 0
		}, "slow client never blocked on output: %v", line)
		// Meanwhile other clients are served promptly and memory stays bounded.
		other := dialRaw(t, ts.Addr)
		// (Served at all is what counts: an event loop stuck writing to the
		// slow reader, which reads nothing yet, would never answer. How fast
		// is for the benchmarks: a bound of a second failed on loaded CI.)
		for i := range 10 {
			other.write(multibulk("PING") + multibulk("SET", "other", strconv.Itoa(i)))
			for _, reply := range []string{`+"PONG"`, `+"OK"`} {
				v, err := other.tryRead(stallTimeout)
				if err != nil {
					t.Fatalf("PING+SET not answered within %v while a client is blocked on output: %v", stallTimeout, err)
				}
				want(t, v, reply)
			}
			f := admin.info("memory")
			if rss := infoInt(t, f, "used_memory_rss"); rss > baseRSS+400<<20 {
				t.Fatalf("used_memory_rss grew from %d to %d bytes with one slow reader", baseRSS, rss)
			}
			l := admin.clientList("ID", slowID)[slowID]
			if obl, _ := strconv.Atoi(l["obl"]); obl > 64<<20 {
				t.Fatalf("slow client's output buffer is %d bytes", obl)
			}
			time.Sleep(20 * time.Millisecond) // let time pass with the reader stalled
		}

		// Now read everything, as fast as we can: every reply intact and in
		// order, and the replies keep coming: the client blocked on output
		// resumes. Each reply must arrive within stallTimeout of the one
		// before, which catches a client that is never resumed, not a slow
		// one (the drain's speed is for the benchmarks: a deadline on the
		// whole drain failed on loaded CI runs).
		drainStart := time.Now()
		rd := io.MultiReader(bytes.NewReader(slow.buf), slow.rd)
		br := bufio.NewReaderSize(rd, 1<<20)
		var buf []byte
		for i := range gets {
			slow.c.SetReadDeadline(time.Now().Add(stallTimeout))
			p, hdr, err := readBulkInto(br, buf)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("reply %d of %d did not arrive within %v (%d MB read in %v): a client blocked on output was not resumed",
					i, gets, stallTimeout, i*valueSize>>20, time.Since(drainStart).Round(time.Millisecond))
			}
			if err != nil || p == nil {
				t.Fatalf("reply %d: %q %v", i, hdr, err)
			}
			buf = p[:cap(p)]
			if !bytes.Equal(p, big) {
				t.Fatalf("reply %d: %d bytes, not the value", i, len(p))
			}
			if i%100 == 99 {
				p, hdr, err := readBulkInto(br, nil)
				if err != nil || string(p) != strconv.Itoa(i) {
					t.Fatalf("after reply %d: ECHO reply %q %q %v", i, p, hdr, err)
				}
			}
		}
		t.Logf("drained %d MB in %v", gets*valueSize>>20, time.Since(drainStart).Round(time.Millisecond))
		wait()
		slow.rd = br
		slow.buf = nil
		want(t, slow.do("PING"), `+"PONG"`)
	})
}

// allocGuard fails the test when the process has allocated more than
// perByte times the bytes sent since it was made (plus slack): a server that
// copies everything buffered on every read of a large request allocates
// quadratically in the request size, which shows here long before the
// request completes.
type allocGuard struct {
	t     *testing.T
	start uint64
}

func newAllocGuard(t *testing.T) *allocGuard {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return &allocGuard{t: t, start: ms.TotalAlloc}
}

func (g *allocGuard) check(sent int, what string) {
	g.t.Helper()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	const perByte, slack = 12, 256 << 20
	if d := ms.TotalAlloc - g.start; d > uint64(perByte*sent+slack) {
		g.t.Fatalf("%s: %d MB allocated for %d MB sent: the server copies the buffered request on every read (quadratic in its size)",
			what, d>>20, sent>>20)
	}
}

// bigValue returns n bytes whose every 64 KB block starts with its index, so
// a lost, repeated or reordered part of the value is detected.
func bigValue(n int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	block := make([]byte, 64<<10)
	for i := range block {
		block[i] = byte(rng.Uint32())
	}
	v := bytes.Repeat(block, (n+len(block)-1)/len(block))[:n]
	for off := 0; off+8 <= n; off += len(block) {
		copy(v[off:], fmt.Sprintf("%08x", off/len(block)))
	}
	return v
}

func TestPipelineLargeValues(t *testing.T) {
	forStrategies(t, func(t *testing.T, ts *testServer) {
		c := dialRaw(t, ts.Addr)
		other := dialRaw(t, ts.Addr)

		// 10 MB in one write.
		ten := bigValue(10 << 20)
		g := newAllocGuard(t)
		wait := c.writeAsync(multibulk("SET", "ten", string(ten)))
		v, err := c.tryRead(30 * time.Second)
		wait()
		if err != nil || v.String() != `+"OK"` {
			t.Fatalf("SET of 10 MB: %s %v", v, err)
		}
		g.check(len(ten), "SET of 10 MB")
		want(t, c.do("STRLEN", "ten"), "(integer) 10485760")
		if v := c.do("GET", "ten"); v.Type != '$' || !bytes.Equal(v.Str, ten) {
			t.Fatalf("GET ten: %d bytes, type %q", len(v.Str), v.Type)
		}

		// 100 MB in 1 MB writes, with a round trip on another connection
		// every 10 MB, so that the value arrives in many reads.
		const size = 100 << 20
		hundred := bigValue(size)
		g = newAllocGuard(t)
		c.write("*3\r\n$3\r\nSET\r\n$7\r\nhundred\r\n$" + strconv.Itoa(size) + "\r\n")
		for off := 0; off < size; off += 1 << 20 {
			c.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := c.c.Write(hundred[off:min(off+1<<20, size)]); err != nil {
				t.Fatalf("write at %d: %v", off, err)
			}
			if off%(10<<20) == 0 {
				want(t, other.do("PING"), `+"PONG"`)
				g.check(off+1<<20, "SET of 100 MB in 1 MB writes")
			}
		}
		c.write("\r\n")
		v, err = c.tryRead(30 * time.Second)
		if err != nil || v.String() != `+"OK"` {
			t.Fatalf("SET of 100 MB: %s %v", v, err)
		}
		g.check(size, "SET of 100 MB in 1 MB writes")
		want(t, c.do("STRLEN", "hundred"), "(integer) 104857600")
		c.write(multibulk("GET", "hundred"))
		c.c.SetReadDeadline(time.Now().Add(60 * time.Second))
		br := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(c.buf), c.rd), 1<<20)
		p, hdr, err := readBulkInto(br, nil)
		if err != nil || !bytes.Equal(p, hundred) {
			t.Fatalf("GET hundred: header %q, %d bytes, equal=%v, %v", hdr, len(p), bytes.Equal(p, hundred), err)
		}
		c.rd, c.buf = br, nil
		want(t, c.do("DEL", "hundred", "ten"), "(integer) 2")
	})
}

// garbage returns a random request: raw bytes, RESP fragments and real
// commands mixed, so that the parser is driven into every state.
func garbage(rng *rand.Rand) []byte {
	pieces := []string{"*", "$", "\r\n", "\r", "\n", "-1", "-2", "0", "1", "2", "3", "10", "99999999999",
		"SET", "GET", "PING", "INCR", "MGET", "CLIENT", "LIST", "QUIT", "\"", "'", "\\x4", " ", "a", "{tag}",
		multibulk("PING"), multibulk("SET", "g", "v"), multibulk("MGET", "a", "b", "c"), "*2\r\n$3\r\nGET\r\n"}
	var b []byte
	n := 1 + rng.IntN(40)
	for range n {
		if rng.IntN(4) == 0 {
			for range 1 + rng.IntN(16) {
				b = append(b, byte(rng.IntN(256)))
			}
		} else {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
	}
	return b
}

func TestPipelineGarbage(t *testing.T) {
	forStrategies(t, func(t *testing.T, ts *testServer) {
		rng := rand.New(rand.NewPCG(20261122, 7))
		inputs := make([][]byte, 200)
		for i := range inputs {
			inputs[i] = garbage(rng)
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(inputs))
		sem := make(chan struct{}, 8)
		for i, in := range inputs {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if err := sendGarbage(ts.Addr, in); err != nil {
					errs <- fmt.Errorf("input %d %q: %v", i, in, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		c := dialRaw(t, ts.Addr)
		want(t, c.do("PING"), `+"PONG"`)
		want(t, c.do("SET", "after", "garbage"), `+"OK"`)
		want(t, c.do("GET", "after"), `"garbage"`)
		eventually(t, 5*time.Second, func() bool { return len(c.clientList()) == 1 }, "garbage connections still open")
	})
}

// sendGarbage writes in, half-closes, and reads until the server closes the
// connection: all within 2s, with well-formed replies.
func sendGarbage(addr string, in []byte) error {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline := time.Now().Add(2 * time.Second)
	conn.SetDeadline(deadline)
	if _, err := conn.Write(in); err != nil && !isReset(err) {
		return fmt.Errorf("write: %v", err)
	}
	// No more input: the server must answer what is complete and close.
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil && !isReset(err) {
		return fmt.Errorf("close write: %v", err)
	}
	out, err := io.ReadAll(conn)
	if err != nil && !isReset(err) {
		return fmt.Errorf("not closed within 2s (%v); read %q", err, out)
	}
	for len(out) > 0 {
		_, n, err := resp.ReadReply(out)
		if err != nil || n == 0 {
			return fmt.Errorf("malformed or truncated reply %q: %v", out, err)
		}
		out = out[n:]
	}
	return nil
}

func isReset(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ENOTCONN)
}
