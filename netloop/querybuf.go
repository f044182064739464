package netloop

import (
	"math"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/svcdb/svcdb/core/resp"
)

// A client's query buffer is what it sent that is not yet parsed. Most of
// it lives in gnet's per-connection inbound buffer, which is right for
// ordinary commands but wrong for a large one: gnet's elastic ring buffer
// doubles as a partial command grows, puts every outgrown array in a pool,
// and Peek copies a wrapped ring into yet another pooled array, so a bulk
// still arriving cost several times its size in RSS (1.6x for 48 MiB bulks,
// up to 4.4x in issue 14's runs), kept by the pools after the client left.
// A command with at least bigCommandMin bytes of a bulk still to arrive
// (known from Parser.Need) is therefore read into the client's own buffer,
// qb, sized for the bulk being read (see bigCap) and dropped as soon as the
// command has run, as Redis reads a big argument into a query buffer of its
// own (PROTO_MBULK_BIG_ARG, sdsMakeRoomForNonGreedy).
//
// Invariants: qb is nil or holds input starting at the first byte of a
// command, before everything still in gnet's buffer; while qb is non-nil,
// bytes are parsed from qb only, and gnet's buffer holds at most what
// arrived after the last read into qb.

// bigCommandMin is how many bytes of a pending command, known from the bulk
// being read, must still be missing for it to be read into its own buffer
// instead of gnet's.
const bigCommandMin = 256 << 10

// unauthQueryBufferLimit caps the query buffer of a client that must still
// authenticate (see docs/security.md: Redis 7.0 has no such cap, but keeps
// no input of an unauthenticated client it is not parsing, whereas svcdb
// stops parsing a client that does not read its replies).
const unauthQueryBufferLimit = 1 << 20

// queryBufferLimit is the most input c may have buffered, unparsed.
func (s *Server) queryBufferLimit(c *client) int {
	limit := int(min(s.live.queryBufferLimit.Load(), math.MaxInt))
	if s.authRequired(c) { // only such a client gets unauthQueryBufferLimit
		limit = min(limit, unauthQueryBufferLimit)
	}
	return limit
}

// queryBuffered is how many input bytes c has buffered, unparsed.
func (c *client) queryBuffered(gc gnet.Conn) int { return len(c.qb) + gc.InboundBuffered() }

// overQueryLimit reports, and logs as Redis does, a client whose buffered
// input passed its limit. It is checked on every turn, whatever the client
// is waiting for, before anything is parsed: Redis checks after every read.
func (s *Server) overQueryLimit(c *client, gc gnet.Conn) bool {
	n := c.queryBuffered(gc)
	limit := s.queryBufferLimit(c)
	if n <= limit {
		return false
	}
	s.log.Warn("closing client that reached max query buffer length", "id", c.id, "addr", c.addr,
		"qbuf", n, "limit", limit, "authenticated", !s.authRequired(c), "qbuf_initial_bytes", s.queryPrefix(c, gc))
	return true
}

// queryPrefix quotes the first bytes of c's query buffer for the log, as
// Redis' "qbuf initial bytes".
func (s *Server) queryPrefix(c *client, gc gnet.Conn) string {
	if len(c.qb) > 0 {
		return strconv.Quote(string(c.qb[:min(len(c.qb), 64)]))
	}
	b, _ := gc.Peek(min(gc.InboundBuffered(), 64))
	return strconv.Quote(string(b))
}

// publishQueryBuffer makes c's query buffer figures visible to CLIENT LIST.
func (c *client) publishQueryBuffer(gc gnet.Conn) {
	c.qbuf.Store(int64(c.queryBuffered(gc)))
	c.qbufFree.Store(int64(cap(c.qb) - len(c.qb)))
	c.argvMem.Store(int64(c.parser.PendingArgBytes()))
	c.srv.cmem.Update(&c.mem, c.memUsage(), !c.noEvict.Load())
}

// startBig is called with gnet's buffered input, buf, once consume has
// used its first off bytes. When the parser says the incomplete command in
// buf[off:] is large, it moves that command into a buffer of its own and
// empties gnet's buffer. It reports whether it did.
func (s *Server) startBig(c *client, gc gnet.Conn, buf []byte, off int) bool {
	rest := buf[off:]
	need := c.parser.Need()
	if need-len(rest) < bigCommandMin && (len(rest) < bigCommandMin || !c.parser.Partial()) {
		// Most of it is here, and what is here is small: gnet's buffer
		// keeps it. A command of many small arguments (whose Need grows a
		// little per argument) moves once what has arrived of it reaches
		// bigCommandMin: in gnet's buffer, every read would copy all of it
		// again (Peek of a wrapped ring), quadratic in the command's size.
		return false
	}
	c.qb = make([]byte, len(rest), bigCap(0, len(rest), min(need, s.queryBufferLimit(c)+1)))
	copy(c.qb, rest)
	_, _ = gc.Discard(len(buf)) // buf may be a pooled copy gnet reuses: copied first
	return true
}

// readBig fills c.qb from gnet and runs the commands it completes. It
// reports closeNow as consume does, and more when c.qb is done with (the
// rest of the input, if any, is in gnet's buffer and may be parsed from
// there in this turn).
func (s *Server) readBig(c *client, gc gnet.Conn) (closeNow, more bool) {
	for {
		need := c.parser.Need()
		avail := gc.InboundBuffered()
		want := len(c.qb) + avail
		if need-len(c.qb) >= bigCommandMin {
			// Only this large bulk: the bytes after it stay in gnet's
			// buffer. Small arguments are read in whatever has arrived,
			// not one argument per pass.
			want = min(want, need)
		}
		want = min(want, s.queryBufferLimit(c)+1)
		if want > cap(c.qb) {
			past := s.queryBufferLimit(c) + 1
			grown := want + 64<<10 // a header line (need == 0) is at most MaxInlineLen long
			if need > 0 {
				grown = bigCap(cap(c.qb), want, min(need, past))
			}
			// Many arguments after a large one grow the buffer by a quarter
			// at a time, not by one argument or header line at a time.
			grown = max(grown, min(cap(c.qb)+cap(c.qb)/4, past))
			// A command of many arguments is sized for what its arguments
			// so far foretell, up to four times what has arrived: a 2M-
			// argument RPUSH (21 MB) grew in 20 quarter steps that
			// allocated and copied 84 MB; now 4 steps and 21 MB.
			grown = max(grown, min(manyArgsEstimate(&c.parser), 4*len(c.qb), past))
			nb := make([]byte, len(c.qb), grown)
			copy(nb, c.qb)
			c.qb = nb
		}
		read, _ := gc.Read(c.qb[len(c.qb):want])
		c.qb = c.qb[:len(c.qb)+read]
		if s.overQueryLimit(c, gc) {
			return true, false
		}
		if need > 0 && len(c.qb) < need {
			return false, false // the bulk is still arriving
		}
		off, closeNow := s.consume(c, c.qb)
		if closeNow {
			return true, false
		}
		c.netIn += int64(off)
		c.qb = c.qb[:copy(c.qb, c.qb[off:])]
		if len(c.qb) == 0 {
			s.dropBig(c)
			return false, c.parsing() && c.protoErr == nil
		}
		if read == 0 && off == 0 || !c.parsing() || c.protoErr != nil {
			return false, false
		}
	}
}

// manyArgsEstimate is the size of the pending multibulk command if its
// arguments still to come are as long on average as those read so far, or
// 0 while too few have been read to tell.
func manyArgsEstimate(p *resp.Parser) int {
	read, left, end := p.Progress()
	if read < 64 || left == 0 {
		return 0
	}
	per := end/read + 1
	if left > (math.MaxInt-end)/per {
		return math.MaxInt
	}
	return end + left*per
}

// bigCap is the capacity to give a large command's buffer of capacity cur
// that must hold want bytes and will hold target (the end of the bulk being
// read, or one byte past the query buffer limit, where the client is closed).
//
// Sizing it for the target at once, as Redis does (sdsMakeRoomForNonGreedy),
// would let a client that announces 512 MB and sends a byte make the Go heap
// 512 MB larger: memory never touched, but counted by the collector's pacing
// and the memory limit, and zeroed, so resident, when the allocation reuses
// freed pages. So the buffer grows fourfold from 1 MiB and is sized for the
// target once it would reach a quarter of it: it is never more than 16 times
// what has arrived, and the buffers outgrown on the way add up to less than a
// third of the target (1, 4 and 48 MiB for a 48 MiB bulk; 1, 4, 16, 64 and
// 512 MiB for a 512 MiB one).
func bigCap(cur, want, target int) int {
	c := max(want, 4*cur, 1<<20)
	if c >= target/4 {
		c = target
	}
	return max(c, want)
}

// dropBig releases c's own query buffer. The parsed arguments of its last
// command alias it: c.argv is cleared too, so nothing keeps it reachable
// and the garbage collector, then the scavenger, give its memory back.
func (s *Server) dropBig(c *client) {
	if c.qb == nil {
		return
	}
	if s.dropped.Add(int64(cap(c.qb))) >= releaseMin {
		select {
		case s.releaseKick <- struct{}{}:
		default:
		}
	}
	c.qb = nil
	clear(c.argv[:cap(c.argv)])
}

// releaseMin is how many bytes of dropped query buffers make
// memoryReleaser collect; releaseEvery is how often it may.
const (
	releaseMin   = 64 << 20
	releaseEvery = time.Second
)

// memoryReleaser returns freed memory to the kernel, on its own goroutine
// and at most once per releaseEvery, once releaseMin bytes of large query
// buffers have been dropped. Without it that memory would stay resident
// until the next collection, which an idle server does not run for two
// minutes (the heap goal was set while the buffers were live), and then
// until the background scavenger, paced at about 1% of a CPU, got to it:
// on a loaded machine 30 MB were still resident 15 s after 128 MB of
// buffers were dropped. debug.FreeOSMemory collects, finishes the sweep
// and scavenges every free page; it blocks only this goroutine, and in Go
// 1.26 its scavenging takes the page allocator's per-chunk locks, not the
// heap lock, so the event loops' allocations do not wait for it.
//
// A burst of drops can straddle a release: what the burst drops after this
// goroutine took the count, less than releaseMin, would kick nobody and
// stay resident (on a loaded machine the releaser can run between the
// closes of TestBufferedBulkRSS's eight 24 MB buffers, and the last one or
// two would stay until the next collection). So after a
// release it looks again every releaseEvery: releaseMin dropped meanwhile
// is released as before, and a smaller tail is released once a look finds
// that nothing more was dropped since the previous one (the burst is
// over). A steady trickle of drops is released per releaseMin, as before.
func (s *Server) memoryReleaser() {
	for {
		select {
		case <-s.releaseKick:
		case <-s.stopped:
			return
		}
		if s.dropped.Load() < releaseMin {
			continue
		}
	release:
		for {
			s.dropped.Swap(0)
			debug.FreeOSMemory()
			for prev := int64(0); ; {
				select {
				case <-time.After(releaseEvery):
				case <-s.stopped:
					return
				}
				switch d := s.dropped.Load(); {
				case d == 0:
					break release // nothing since the release: wait for a kick
				case d >= releaseMin || d == prev:
					continue release // a full batch, or the tail of a burst that ended
				default:
					prev = d
				}
			}
		}
	}
}
