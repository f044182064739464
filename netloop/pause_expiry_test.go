package netloop_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
)

// rawInfoField returns one field of INFO's reply ("" when absent).
func rawInfoField(t *testing.T, c *rawConn, section, name string) string {
	t.Helper()
	for _, l := range strings.Split(string(c.do("INFO", section).Str), "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	return ""
}

// During CLIENT PAUSE WRITE a key whose time to live has passed reads as
// missing but is not deleted (DBSIZE still counts it, expired_keys does not
// move), as Redis 7.0's expireIfNeeded; once the pause ends, a read deletes
// it and the active expiry cycle the untouched one. The same sequence runs
// against redis-server and the transcripts must match.
func TestPauseHoldsLazyExpiryMatchesRedis(t *testing.T) {
	needTool(t, "redis-server")
	run := func(addr string) string {
		c := dialRaw(t, addr)
		var b strings.Builder
		do := func(args ...string) {
			fmt.Fprintf(&b, "%s -> %s\n", strings.Join(args, " "), formatReply(c.do(args...)))
		}
		do("SET", "k", "v", "PX", "50")
		do("SET", "untouched", "v", "PX", "50")
		do("SET", "other", "v")
		do("CLIENT", "PAUSE", "5000", "WRITE")
		time.Sleep(300 * time.Millisecond) // past the expiry, and past 2 active expiry cycles
		for _, cmd := range [][]string{{"GET", "k"}, {"EXISTS", "k"}, {"TTL", "k"}, {"PTTL", "k"},
			{"TYPE", "k"}, {"STRLEN", "k"}, {"MGET", "k", "other"}, {"DBSIZE"}, {"GET", "k"}, {"DBSIZE"}} {
			do(cmd...)
		}
		fmt.Fprintf(&b, "expired_keys during the pause: %s\n", rawInfoField(t, c, "stats", "expired_keys"))
		do("CLIENT", "UNPAUSE")
		do("GET", "k")
		eventually(t, 5*time.Second, func() bool { return c.do("DBSIZE").Int == 1 }, "the untouched expired key is deleted after the pause")
		fmt.Fprintf(&b, "expired_keys after the pause: %s\n", rawInfoField(t, c, "stats", "expired_keys"))
		return b.String()
	}
	want := run(redistest.Start(t))
	if got := run(startServer(t).Addr); got != want {
		t.Errorf("svcdb:\n%s\nredis-server:\n%s", got, want)
	}
	t.Logf("redis-server:\n%s", want)
}
