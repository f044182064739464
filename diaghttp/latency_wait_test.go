package diaghttp_test

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/cmdstats"
	"github.com/svcdb/svcdb/shard"
)

// TestDurationIncludesShardWait: a command held behind a busy shard shows
// its wait in svc_commands_duration_seconds, and not in
// svc_commands_execution_seconds. One shard, drained by its own goroutine
// (Dedicated), so every command is queued; a SUNIONSTORE of a large set on it
// (a SUNIONSTORE of a large set) keeps it busy while a GET from another connection waits behind it. The
// GET executes in microseconds, so of the samples at or above a quarter of
// the wait the client saw, the duration histogram has at least one more
// than the execution histogram: the GET's wait.
func TestDurationIncludesShardWait(t *testing.T) {
	f := startWith(t, "", shard.Config{Shards: 1, Strategy: shard.Dedicated})
	fill := dialRedis(t, f.redis)
	const members, perCmd = 300_000, 1000
	var b strings.Builder
	for i := 0; i < members; i += perCmd {
		b.Reset()
		fmt.Fprintf(&b, "*%d\r\n$4\r\nSADD\r\n$3\r\nbig\r\n", perCmd+2)
		for j := i; j < i+perCmd; j++ {
			m := strconv.Itoa(members - j)
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(m), m)
		}
		if _, err := fill.c.Write([]byte(b.String())); err != nil {
			t.Fatal(err)
		}
	}
	for range members / perCmd {
		if r := fill.line(t); r != ":1000" {
			t.Fatalf("SADD: %q", r)
		}
	}

	busy, waiter := fill, dialRedis(t, f.redis) // the fixture allows two clients
	for attempt := 1; ; attempt++ {
		_, before := f.scrape(t)
		// SUNIONSTORE copies 300,000 members on the shard: tens of milliseconds.
		if _, err := busy.c.Write([]byte("*3\r\n$11\r\nSUNIONSTORE\r\n$4\r\ncopy\r\n$3\r\nbig\r\n")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // let the SUNIONSTORE reach the shard first
		start := time.Now()
		if r := waiter.do(t, "GET", "k"); r != "$-1" {
			t.Fatalf("GET: %q", r)
		}
		saw := time.Since(start)
		if r := busy.line(t); r != ":300000" {
			t.Fatalf("SUNIONSTORE: %q", r)
		}
		_, after := f.scrape(t)

		// The largest power-of-two bound at most a quarter of what the
		// client saw: the GET's server-side latency is above it.
		quarter := saw.Microseconds() / 4
		if quarter < 1000 && attempt < 5 {
			continue // the GET did not wait behind the SUNIONSTORE this time
		}
		if quarter < 1000 {
			t.Fatalf("the GET never waited behind the SUNIONSTORE (last: %v)", saw)
		}
		k := bits.Len64(uint64(quarter)) - 1
		le := strconv.FormatFloat(float64(int64(1)<<k)/1e6, 'g', -1, 64)
		above := func(m map[string]float64, fam string) float64 {
			return m[fam+`_count`] - m[fam+`_bucket{le="`+le+`"}`]
		}
		dur := above(after, "svc_commands_duration_seconds") - above(before, "svc_commands_duration_seconds")
		exec := above(after, "svc_commands_execution_seconds") - above(before, "svc_commands_execution_seconds")
		// On a loaded machine the client's own scheduling can make a GET
		// that did not wait look slow: try again, a few times. With the
		// wait left out of the duration histogram no attempt passes.
		if (dur < 2 || dur-exec < 1) && attempt < 5 {
			continue
		}
		if dur < 2 || dur-exec < 1 {
			t.Fatalf("the GET waited %v (client side); samples above %ss: duration %v, execution %v; want the GET's wait in duration only", saw, le, dur, exec)
		}
		if k >= cmdstats.Pow2Bounds {
			t.Fatalf("bound %d past the histogram", k)
		}
		return
	}
}
