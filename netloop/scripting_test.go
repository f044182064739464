package netloop_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
	"github.com/svcdb/svcdb/core/resp"
)

// TestScriptGoRedis runs go-redis' Script helpers (EVALSHA, falling back to
// EVAL on NOSCRIPT), Eval, EvalSha and EvalRO against svcdb.
func TestScriptGoRedis(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer c.Close()

	incrBy := redis.NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)
	for i := 1; i <= 3; i++ {
		n, err := incrBy.Run(ctx, c, []string{"counter"}, 5).Int64()
		if err != nil || n != int64(5*i) {
			t.Fatalf("Script.Run #%d = %d, %v; want %d", i, n, err, 5*i)
		}
	}
	if ok, err := incrBy.Exists(ctx, c).Result(); err != nil || len(ok) != 1 || !ok[0] {
		t.Fatalf("Script.Exists = %v, %v", ok, err)
	}
	v, err := c.Eval(ctx, "return {KEYS[1], ARGV[1], 7, {ok='x'}}", []string{"k"}, "a").Slice()
	if err != nil || fmt.Sprint(v) != "[k a 7 x]" {
		t.Fatalf("Eval = %v, %v", v, err)
	}
	sha, err := c.ScriptLoad(ctx, "return redis.call('GET', KEYS[1])").Result()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.EvalSha(ctx, sha, []string{"counter"}).Text(); err != nil || got != "15" {
		t.Fatalf("EvalSha = %q, %v", got, err)
	}
	if got, err := c.EvalShaRO(ctx, sha, []string{"counter"}).Text(); err != nil || got != "15" {
		t.Fatalf("EvalShaRO = %q, %v", got, err)
	}
	if err := c.EvalRO(ctx, "return redis.call('SET', KEYS[1], 1)", []string{"x"}).Err(); err == nil ||
		!strings.Contains(err.Error(), "Write commands are not allowed from read-only scripts.") {
		t.Fatalf("EvalRO writing: %v", err)
	}
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.EvalSha(ctx, sha, nil).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EvalSha after FLUSH: %v", err)
	}
	// Script.Run loads it again on NOSCRIPT.
	if n, err := incrBy.Run(ctx, c, []string{"counter"}, 1).Int64(); err != nil || n != 16 {
		t.Fatalf("Script.Run after FLUSH = %d, %v", n, err)
	}
}

// redlockAcquire and redlockRelease are the Redlock pattern's scripts (as
// its ports ship them): set the lock if free, release it only if we own it.
const (
	redlockAcquire = `if redis.call('exists', KEYS[1]) == 0 then
  redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`
	redlockRelease = `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0`
)

// TestScriptRedlock has several clients take and release one lock with the
// Redlock scripts while each, holding it, increments a counter with a
// read-modify-write that only mutual exclusion keeps correct. Run with -race.
func TestScriptRedlock(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	acquire, release := redis.NewScript(redlockAcquire), redis.NewScript(redlockRelease)
	const clients, rounds = 6, 40
	var wg sync.WaitGroup
	var holders, maxHolders atomic.Int64
	for i := range clients {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: ts.Addr})
			defer c.Close()
			token := "client-" + strconv.Itoa(id)
			for r := 0; r < rounds; {
				got, err := acquire.Run(ctx, c, []string{"lock"}, token, 10000).Int64()
				if err != nil {
					t.Error(err)
					return
				}
				if got == 0 {
					continue
				}
				if h := holders.Add(1); h > maxHolders.Load() {
					maxHolders.Store(h)
				}
				v, _ := c.Get(ctx, "guarded").Int64()
				if err := c.Set(ctx, "guarded", v+1, 0).Err(); err != nil {
					t.Error(err)
				}
				holders.Add(-1)
				if n, err := release.Run(ctx, c, []string{"lock"}, token).Int64(); err != nil || n != 1 {
					t.Errorf("release = %d, %v", n, err)
					return
				}
				r++
			}
		}(i)
	}
	wg.Wait()
	c := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer c.Close()
	if v, err := c.Get(ctx, "guarded").Int64(); err != nil || v != clients*rounds {
		t.Fatalf("guarded = %d, %v; want %d (a lost update: two holders at once)", v, err, clients*rounds)
	}
	if maxHolders.Load() != 1 {
		t.Fatalf("%d clients held the lock at once", maxHolders.Load())
	}
}

// TestScriptAtomicAcrossShards moves amounts between keys on different
// shards, declared and undeclared, from several clients, while others read
// every key with MGET: the total never changes, so no other command ran
// between a script's commands.
func TestScriptAtomicAcrossShards(t *testing.T) {
	ts := startServer(t, withShards(4))
	ctx := context.Background()
	keys := []string{"acct:a", "acct:b", "acct:c", "acct:d", "acct:e", "acct:f"}
	shards := map[int]bool{}
	for _, k := range keys {
		shards[ts.RT.ShardOf([]byte(k))] = true
	}
	if len(shards) < 2 {
		t.Fatalf("keys on %d shard(s); want several", len(shards))
	}
	setup := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer setup.Close()
	for _, k := range keys {
		setup.Set(ctx, k, 100, 0)
	}
	// KEYS[1] is declared; the destination is computed, never declared.
	move := redis.NewScript(`local from = KEYS[1]
local to = 'acct:' .. ARGV[1]
local n = tonumber(ARGV[2])
redis.call('decrby', from, n)
redis.call('incrby', to, n)
return 1`)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var bad atomic.Int64
	for i := range 3 {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: ts.Addr})
			defer c.Close()
			for j := range 150 {
				from := keys[(i+j)%len(keys)]
				to := keys[(i+2*j+1)%len(keys)][len("acct:"):]
				if err := move.Run(ctx, c, []string{from}, to, j%7+1).Err(); err != nil {
					t.Error(err)
					return
				}
			}
		}(i)
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			c := redis.NewClient(&redis.Options{Addr: ts.Addr})
			defer c.Close()
			for {
				select {
				case <-stop:
					return
				default:
				}
				vals, err := c.MGet(ctx, keys...).Result()
				if err != nil {
					t.Error(err)
					return
				}
				sum := 0
				for _, v := range vals {
					n, _ := strconv.Atoi(v.(string))
					sum += n
				}
				if sum != 100*len(keys) {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if bad.Load() != 0 {
		t.Fatalf("%d reads saw a script half done", bad.Load())
	}
}

// TestScriptRateLimiter is a fixed-window rate limiter as the libraries
// ship it, with its keys on one shard (a hash tag) and on several.
func TestScriptRateLimiter(t *testing.T) {
	ts := startServer(t, withShards(4))
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer c.Close()
	limiter := redis.NewScript(`local n = redis.call('incr', KEYS[1])
if n == 1 then redis.call('pexpire', KEYS[1], ARGV[2]) end
redis.call('incr', KEYS[2])
if n > tonumber(ARGV[1]) then return 0 end
return 1`)
	for _, keys := range [][]string{{"{user1}:win", "{user1}:total"}, {"user2:win", "user2:total-elsewhere"}} {
		allowed := 0
		for range 15 {
			n, err := limiter.Run(ctx, c, keys, 10, 60000).Int64()
			if err != nil {
				t.Fatal(err)
			}
			allowed += int(n)
		}
		if allowed != 10 {
			t.Errorf("%v: %d allowed; want 10", keys, allowed)
		}
		if ttl := c.PTTL(ctx, keys[0]).Val(); ttl <= 0 || ttl > time.Minute {
			t.Errorf("%v: window TTL %v", keys, ttl)
		}
		if total, _ := c.Get(ctx, keys[1]).Int(); total != 15 {
			t.Errorf("%v: total %d; want 15", keys, total)
		}
	}
}

// TestScriptWatchSeesWrites: a script's write to a watched key aborts the
// watcher's EXEC, as any other write does.
func TestScriptWatchSeesWrites(t *testing.T) {
	ts := startServer(t)
	a, b := dialRaw(t, ts.Addr), dialRaw(t, ts.Addr)
	if got := string(a.do("WATCH", "w").Str); got != "OK" {
		t.Fatal(got)
	}
	b.do("EVAL", "return redis.call('set', 'w', 'x')", "0")
	a.do("MULTI")
	a.do("GET", "w")
	if got := a.do("EXEC"); !got.Null {
		t.Fatalf("EXEC after a script wrote a watched key = %v; want a null array", got)
	}
}

// TestScriptBadInput: a syntax error, a runtime error, deep recursion, a
// self-containing table and a huge reply each give Redis' error (or reply)
// and the server keeps serving; compared with redis-server where the texts
// are Redis' own.
func TestScriptBadInput(t *testing.T) {
	ts := startServer(t)
	rc := dialRaw(t, redistest.Start(t))
	sc := dialRaw(t, ts.Addr)
	for _, tc := range []struct {
		script string
		prefix string // the part of the reply that must match
	}{
		{"retur 1", "ERR Error compiling script (new function): user_script:1: "},
		{"return nil + 1", "ERR user_script:1: attempt to perform arithmetic on a nil value"},
		{"local function f() return f() + 1 end return f()", "ERR user_script:1: stack overflow script: "},
		{"local t = {} for i = 1, 200000 do t[i] = i end return #t", ""},
	} {
		want, got := rc.do("EVAL", tc.script, "0"), sc.do("EVAL", tc.script, "0")
		if tc.prefix == "" {
			if want.String() != got.String() {
				t.Errorf("%q:\n got %.200s\nwant %.200s", tc.script, got.String(), want.String())
			}
		} else if !strings.HasPrefix(string(got.Str), tc.prefix) || !strings.HasPrefix(string(want.Str), tc.prefix) {
			t.Errorf("%q:\n got %s\nwant %s (both must start %q)", tc.script, got.Str, want.Str, tc.prefix)
		}
	}
	// A table that contains itself: nested arrays as deep as Redis' Lua
	// stack allows, then its error in place of the next one.
	nested := func(r *rawConn) (depth int, last string) {
		r.write(multibulk("EVAL", "local t = {} t[1] = t return t", "0"))
		for {
			line, err := r.rd.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if line != "*1\r\n" {
				return depth, line
			}
			depth++
		}
	}
	rd, rl := nested(rc)
	sd, sl := nested(sc)
	if rd != sd || rl != sl {
		t.Errorf("self-containing table: svcdb %d arrays then %q; redis-server %d then %q", sd, sl, rd, rl)
	}
	// A huge table reply arrives whole (read by go-redis: the raw
	// helper re-parses its buffer at every read).
	gc := redis.NewClient(&redis.Options{Addr: ts.Addr, ReadTimeout: time.Minute})
	defer gc.Close()
	got, err := gc.Eval(context.Background(), "local t = {} for i = 1, 100000 do t[i] = i end return t", nil).Slice()
	if err != nil || len(got) != 100000 || got[99999].(int64) != 100000 {
		t.Fatalf("huge reply: %d elements, %v", len(got), err)
	}
	if got := string(sc.do("PING").Str); got != "PONG" {
		t.Fatalf("after bad scripts: PING = %s", got)
	}
}

// TestScriptConcurrentEvalSha: many clients run one cached script at once
// (the cache and the VM are shared by the loops). Run with -race.
func TestScriptConcurrentEvalSha(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c0 := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer c0.Close()
	sha := c0.ScriptLoad(ctx, "return redis.call('incr', KEYS[1])").Val()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: ts.Addr})
			defer c.Close()
			for range 200 {
				if err := c.EvalSha(ctx, sha, []string{"n" + strconv.Itoa(i%3)}).Err(); err != nil {
					t.Error(err)
					return
				}
				if i%4 == 0 {
					// SCRIPT LOAD of other scripts meanwhile
					if err := c.ScriptLoad(ctx, "return "+strconv.Itoa(i)).Err(); err != nil && !errors.Is(err, redis.Nil) {
						t.Error(err)
					}
				}
			}
		}(i)
	}
	wg.Wait()
	total := 0
	for i := range 3 {
		n, _ := c0.Get(ctx, "n"+strconv.Itoa(i)).Int()
		total += n
	}
	if total != 8*200 {
		t.Fatalf("total %d; want %d", total, 8*200)
	}
}

// otherLoopConn returns a connection served by another event loop than
// busy's (with two loops, one of a few new connections is): the loop
// running a script serves nothing else meanwhile, as Redis' single thread.
func otherLoopConn(t *testing.T, addr string) *rawConn {
	for range 12 {
		c := dialRaw(t, addr)
		c.write(multibulk("PING"))
		// PONG, or -BUSY once the script passed the threshold: PING has
		// no allow-busy flag, as in Redis.
		if _, err := c.tryRead(2 * time.Second); err == nil {
			return c
		}
	}
	t.Fatal("no connection on another loop answered")
	return nil
}

// TestScriptBusyAndKill: past busy-reply-threshold other clients get -BUSY
// (commands flagged allow-busy still run), SCRIPT KILL stops a script that
// has not written, and refuses one that has (-UNKILLABLE); the server
// serves normally afterwards.
func TestScriptBusyAndKill(t *testing.T) {
	ts := startServer(t)
	runner := dialRaw(t, ts.Addr)
	if got := string(runner.do("CONFIG", "SET", "busy-reply-threshold", "100").Str); got != "OK" {
		t.Fatal(got)
	}
	if v := runner.do("SCRIPT", "KILL"); string(v.Str) != "NOTBUSY No scripts in execution right now." {
		t.Fatalf("SCRIPT KILL with no script: %v", v)
	}
	// Endless but for a 30 s bound (TIME is not frozen), so a failing test
	// still stops its server.
	runner.write(multibulk("EVAL", `local t0 = tonumber(redis.call('time')[1])
while tonumber(redis.call('time')[1]) - t0 < 30 do end`, "0"))
	time.Sleep(50 * time.Millisecond) // the runner's loop is now in the script
	other := otherLoopConn(t, ts.Addr)
	// PING runs on the loop, never waiting for shards: it shows when the
	// threshold has passed. A keyed command sent before that waits for
	// the script's shards (docs/scripting.md), so GET comes after.
	isBusy := func(v resp.Value) bool {
		return v.Type == '-' && strings.HasPrefix(string(v.Str), "BUSY Redis is busy running a script.")
	}
	eventually(t, 5*time.Second, func() bool { return isBusy(other.do("PING")) }, "PING never got -BUSY")
	if v := other.do("GET", "x"); !isBusy(v) {
		t.Fatalf("GET during a busy script = %v", v)
	}
	if v := other.do("SCRIPT", "KILL"); string(v.Str) != "OK" {
		t.Fatalf("SCRIPT KILL: %v", v)
	}
	v, err := runner.tryRead(5 * time.Second)
	if err != nil || !strings.HasPrefix(string(v.Str), "ERR Script killed by user with SCRIPT KILL... script: ") {
		t.Fatalf("killed script's reply: %v, %v", v, err)
	}
	if got := string(other.do("SET", "x", "1").Str); got != "OK" {
		t.Fatalf("after the kill: SET = %s", got)
	}

	// A script that wrote cannot be killed; it ends on its own (TIME is
	// not frozen) and its reply arrives.
	runner.write(multibulk("EVAL", `redis.call('set', 'w', 1)
local t0 = tonumber(redis.call('time')[1]) * 1000000 + tonumber(redis.call('time')[2])
while true do
  local t = redis.call('time')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) - t0 > 600000 then return 'done' end
end`, "0"))
	eventually(t, 5*time.Second, func() bool {
		v := other.do("SCRIPT", "KILL")
		return strings.HasPrefix(string(v.Str), "UNKILLABLE Sorry the script already executed write commands")
	}, "SCRIPT KILL never answered UNKILLABLE")
	if v, err := runner.tryRead(5 * time.Second); err != nil || string(v.Str) != "done" {
		t.Fatalf("unkillable script's reply: %v, %v", v, err)
	}
	if got := string(other.do("GET", "w").Str); got != "1" {
		t.Fatalf("GET w = %q", got)
	}
}

// TestScriptAOF: a script's writes reach the append-only file as the
// commands it called (one transaction), across shards, and a second server
// on the same directory loads them; redis.set_repl without REPL_AOF keeps
// the following commands out of the file.
func TestScriptAOF(t *testing.T) {
	dir := t.TempDir()
	params := map[string]string{"data-dir": dir, "save": "", "appendonly": "yes", "appendfsync": "always"}
	ps := startPersistServer(t, params)
	if err := ps.pm.Load(); err != nil {
		t.Fatal(err)
	}
	ps.pm.Start()
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: ps.addr})
	defer c.Close()
	script := `redis.call('set', KEYS[1], 'a')
redis.call('incrby', 'undeclared:' .. KEYS[1], 5)
redis.call('rpush', KEYS[2], 'x', 'y')
redis.set_repl(redis.REPL_NONE)
redis.call('set', 'not-logged', 1)
redis.set_repl(redis.REPL_ALL)
redis.call('set', 'logged-again', 1)
return 1`
	rewriteDone := func() {
		eventually(t, 2*time.Minute, func() bool {
			return strings.Contains(c.Info(ctx, "persistence").Val(), "aof_rewrite_in_progress:0")
		}, "the first server's AOF rewrite never finished")
	}
	// The start-up rewrite's base holds the dataset as it finds it, so a
	// key written with REPL_NONE while it runs may be in the base, as in
	// any later rewrite (Redis too): the scripts run after it is over.
	rewriteDone()
	for _, k := range []string{"s1", "s2", "s3", "s4"} {
		if err := c.Eval(ctx, script, []string{k, "list:" + k}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The first server's start-up rewrite (begun by Load, the directory
	// had no append-only file) writes the manifest through a temporary
	// file of the same name the second server's Load uses: it must be over
	// before another server opens the directory.
	rewriteDone()
	ps2 := startPersistServer(t, params)
	if err := ps2.pm.Load(); err != nil {
		t.Fatal(err)
	}
	c2 := redis.NewClient(&redis.Options{Addr: ps2.addr})
	defer c2.Close()
	for _, k := range []string{"s1", "s2", "s3", "s4"} {
		if v := c2.Get(ctx, k).Val(); v != "a" {
			t.Errorf("after reload %s = %q", k, v)
		}
		if v := c2.Get(ctx, "undeclared:"+k).Val(); v != "5" {
			t.Errorf("after reload undeclared:%s = %q", k, v)
		}
		if v := c2.LRange(ctx, "list:"+k, 0, -1).Val(); fmt.Sprint(v) != "[x y]" {
			t.Errorf("after reload list:%s = %v", k, v)
		}
	}
	if n := c2.Exists(ctx, "not-logged").Val(); n != 0 {
		t.Errorf("a write after set_repl(REPL_NONE) was logged")
	}
	if v := c2.Get(ctx, "logged-again").Val(); v != "1" {
		t.Errorf("after set_repl(REPL_ALL): logged-again = %q", v)
	}
}

// TestScriptInfo: INFO memory counts the cached scripts and their bytes,
// under Redis 7.0's names; SCRIPT FLUSH empties them.
func TestScriptInfo(t *testing.T) {
	ts := startServer(t)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer c.Close()
	c.ScriptLoad(ctx, "return 1")
	c.Eval(ctx, "return 22", nil)
	info := c.Info(ctx, "memory").Val()
	for _, want := range []string{"number_of_cached_scripts:2\r\n", "used_memory_scripts_eval:17\r\n", "used_memory_scripts:17\r\n"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO memory lacks %q", want)
		}
	}
	c.ScriptFlush(ctx)
	if info := c.Info(ctx, "memory").Val(); !strings.Contains(info, "number_of_cached_scripts:0\r\n") {
		t.Errorf("after SCRIPT FLUSH: %s", info)
	}
}
