package netloop_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
)

// Issue 17 part 4: a client blocked in XREADGROUP ... BLOCK 0 is woken with
// an error when its stream goes (deleted, overwritten by another type,
// renamed away, flushed, expired) or its group is destroyed, as Redis 7.0;
// XREAD keeps waiting for a stream to appear. The same scenario runs
// against redis-server, so the replies are Redis' own.
func TestXReadGroupBlockedStreamGone(t *testing.T) {
	t.Run("redis-server", func(t *testing.T) { xreadGroupGone(t, redistest.Start(t), nil) })
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("svcdb/shards=%d", shards), func(t *testing.T) {
			ts := startServer(t, withShards(shards))
			xreadGroupGone(t, ts.Addr, ts)
		})
	}
}

func xreadGroupGone(t *testing.T, addr string, ts *testServer) {
	admin := dialRaw(t, addr)
	admin.do("FLUSHALL")
	const gone = "-UNBLOCKED the stream key no longer exists"
	for _, tc := range []struct {
		name   string
		change [][]string
		want   string
	}{
		{"DEL", [][]string{{"DEL", "{s}"}}, gone},
		{"SET", [][]string{{"SET", "{s}", "x"}}, gone},
		{"RENAME", [][]string{{"RENAME", "{s}", "{s}2"}}, gone},
		{"RENAME to another shard", [][]string{{"RENAME", "{s}", "elsewhere"}}, gone},
		{"FLUSHDB", [][]string{{"FLUSHDB"}}, gone},
		{"FLUSHALL", [][]string{{"FLUSHALL"}}, gone},
		{"active expiry", [][]string{{"PEXPIRE", "{s}", "20"}}, gone},
		{"inside EXEC", [][]string{{"MULTI"}, {"DEL", "{s}"}, {"SET", "{s}", "1"}, {"EXEC"}}, gone},
		{"XGROUP DESTROY", [][]string{{"XGROUP", "DESTROY", "{s}", "g"}}, "-NOGROUP the consumer group this client was blocked on no longer exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			admin.do("DEL", "{s}", "{s}2", "elsewhere")
			if got := formatReply(admin.do("XGROUP", "CREATE", "{s}", "g", "$", "MKSTREAM")); got != "+OK" {
				t.Fatalf("XGROUP CREATE: %s", got)
			}
			c := dialRaw(t, addr)
			c.write(multibulk("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "{s}", ">"))
			waitBlocked(t, admin, 1)
			for _, cmd := range tc.change {
				admin.do(cmd...)
			}
			if got := formatReply(c.read()); got != tc.want {
				t.Fatalf("blocked XREADGROUP got %s; want %s", got, tc.want)
			}
			waitBlocked(t, admin, 0)
		})
	}

	// XREAD (no group) keeps waiting when its stream goes, and is served
	// when one appears.
	admin.do("DEL", "{x}")
	admin.do("XADD", "{x}", "1-1", "a", "1")
	c := dialRaw(t, addr)
	c.write(multibulk("XREAD", "BLOCK", "0", "STREAMS", "{x}", "$"))
	waitBlocked(t, admin, 1)
	admin.do("DEL", "{x}")
	admin.do("SET", "{x}", "string")
	time.Sleep(50 * time.Millisecond)
	waitBlocked(t, admin, 1)
	admin.do("DEL", "{x}")
	admin.do("XADD", "{x}", "2-1", "b", "2")
	if got, want := formatReply(c.read()), `[["{x}", [["2-1", ["b", "2"]]]]]`; got != want {
		t.Fatalf("XREAD got %s; want %s", got, want)
	}
	waitBlocked(t, admin, 0)
}

// The review of the other blocking commands (issue 17 part 4), against
// redis-server too: a client blocked on a list or sorted set keeps waiting
// while its key is some other type or is deleted, and is served when a
// key of its type arrives, RENAME included.
func TestBlockedKeyChangesType(t *testing.T) {
	t.Run("redis-server", func(t *testing.T) { blockedKeyChanges(t, redistest.Start(t)) })
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("svcdb/shards=%d", shards), func(t *testing.T) {
			blockedKeyChanges(t, startServer(t, withShards(shards)).Addr)
		})
	}
}

func blockedKeyChanges(t *testing.T, addr string) {
	admin := dialRaw(t, addr)
	admin.do("FLUSHALL")
	for _, tc := range []struct {
		name    string
		block   []string
		changes [][]string // none of these serves it
		serve   []string
		want    string
	}{
		{"BLPOP", []string{"BLPOP", "{l}", "0"},
			[][]string{{"SET", "{l}", "x"}, {"DEL", "{l}"}, {"SADD", "{l}", "m"}, {"DEL", "{l}"}, {"RPUSH", "{l}src", "a"}},
			[]string{"RENAME", "{l}src", "{l}"}, `["{l}", "a"]`},
		{"BZPOPMIN", []string{"BZPOPMIN", "{z}", "0"},
			[][]string{{"RPUSH", "{z}", "x"}, {"RENAME", "{z}", "{z}other"}, {"ZADD", "{z}src", "1", "m"}},
			[]string{"RENAME", "{z}src", "{z}"}, `["{z}", "m", "1"]`},
		{"BLMOVE", []string{"BLMOVE", "{m}", "{m}dst", "LEFT", "RIGHT", "0"},
			[][]string{{"SET", "{m}", "x"}, {"UNLINK", "{m}"}},
			[]string{"LPUSH", "{m}", "e"}, `"e"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRaw(t, addr)
			c.write(multibulk(tc.block...))
			waitBlocked(t, admin, 1)
			for _, cmd := range tc.changes {
				admin.do(cmd...)
			}
			time.Sleep(20 * time.Millisecond)
			waitBlocked(t, admin, 1)
			admin.do(tc.serve...)
			if got := formatReply(c.read()); got != tc.want {
				t.Fatalf("got %s; want %s", got, tc.want)
			}
			waitBlocked(t, admin, 0)
		})
	}
}
