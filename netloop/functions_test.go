package netloop_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/resp"
)

// go-redis' FunctionLoad, FCall and FCallRO against svcdb, with several
// clients incrementing through a function at once (under -race): every
// increment lands, and the read-only function sees them.
func TestFunctionGoRedis(t *testing.T) {
	ts := startServer(t, withShards(4))
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer c.Close()
	lib := "#!lua name=counters\n" +
		"redis.register_function('incr2', function(keys, args)\n" +
		"  local a = redis.call('incrby', keys[1], args[1])\n" +
		"  local b = redis.call('incrby', keys[2], args[1])\n" +
		"  return a + b\n" +
		"end)\n" +
		"redis.register_function{function_name='sum', flags={'no-writes'}, callback=function(keys)\n" +
		"  return (tonumber(redis.call('get', keys[1])) or 0) + (tonumber(redis.call('get', keys[2])) or 0)\n" +
		"end}\n"
	if name, err := c.FunctionLoad(ctx, lib).Result(); err != nil || name != "counters" {
		t.Fatalf("FunctionLoad = %q, %v", name, err)
	}
	if _, err := c.FunctionLoad(ctx, lib).Result(); err == nil || err.Error() != "ERR Library 'counters' already exists" {
		t.Fatalf("second FunctionLoad: %v", err)
	}
	const clients, each = 8, 50
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				if err := c.FCall(ctx, "incr2", []string{"a", "b"}, 1).Err(); err != nil {
					t.Errorf("FCall: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	n, err := c.FCallRO(ctx, "sum", []string{"a", "b"}).Int64()
	if err != nil || n != 2*clients*each {
		t.Fatalf("FCallRO sum = %d, %v; want %d", n, err, 2*clients*each)
	}
	if err := c.FCallRO(ctx, "incr2", []string{"a", "b"}, 1).Err(); err == nil ||
		err.Error() != "ERR Can not execute a script with write flag using *_ro command." {
		t.Fatalf("FCallRO of a writing function: %v", err)
	}
	libs, err := c.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "count*", WithCode: true}).Result()
	if err != nil || len(libs) != 1 || libs[0].Name != "counters" || libs[0].Code != lib || len(libs[0].Functions) != 2 {
		t.Fatalf("FunctionList = %+v, %v", libs, err)
	}
	if got := fmt.Sprintln(c.FunctionDelete(ctx, "counters").Val(), c.FCall(ctx, "sum", []string{"a", "b"}).Err()); got != "OK ERR Function not found\n" {
		t.Fatalf("after FunctionDelete: %s", got)
	}
}

// A long function: other clients get FUNCTION KILL's -BUSY, FUNCTION STATS
// shows it, SCRIPT KILL refuses it, FUNCTION KILL stops it.
func TestFunctionBusyStatsKill(t *testing.T) {
	ts := startServer(t)
	runner := dialRaw(t, ts.Addr)
	if got := string(runner.do("CONFIG", "SET", "busy-reply-threshold", "100").Str); got != "OK" {
		t.Fatal(got)
	}
	lib := "#!lua name=slow\nredis.register_function('spin', function()\n" +
		"local t0 = tonumber(redis.call('time')[1])\n" +
		"while tonumber(redis.call('time')[1]) - t0 < 30 do end\nend)"
	if v := runner.do("FUNCTION", "LOAD", lib); string(v.Str) != "slow" {
		t.Fatalf("FUNCTION LOAD: %v", v)
	}
	if v := runner.do("FUNCTION", "KILL"); string(v.Str) != "NOTBUSY No scripts in execution right now." {
		t.Fatalf("FUNCTION KILL with nothing running: %v", v)
	}
	runner.write(multibulk("FCALL", "spin", "0", "arg"))
	time.Sleep(50 * time.Millisecond)
	other := otherLoopConn(t, ts.Addr)
	eventually(t, 5*time.Second, func() bool {
		v := other.do("PING")
		return v.Type == '-' && string(v.Str) == "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
	}, "PING never got FUNCTION KILL's -BUSY")
	stats := other.do("FUNCTION", "STATS")
	if got := formatValue(stats); !strings.Contains(got, `"running_script" ["name" "spin" "command" ["FCALL" "spin" "0" "arg"] "duration_ms"`) {
		t.Fatalf("FUNCTION STATS during the function = %s", got)
	}
	if v := other.do("SCRIPT", "KILL"); !strings.HasPrefix(string(v.Str), "BUSY Redis is busy running a script. You can only call FUNCTION KILL") {
		t.Fatalf("SCRIPT KILL of a function: %v", v)
	}
	if v := other.do("FUNCTION", "KILL"); string(v.Str) != "OK" {
		t.Fatalf("FUNCTION KILL: %v", v)
	}
	v, err := runner.tryRead(5 * time.Second)
	if err != nil || !strings.HasPrefix(string(v.Str), "ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:") {
		t.Fatalf("killed function's reply: %v, %v", v, err)
	}
	if got := string(other.do("SET", "x", "1").Str); got != "OK" {
		t.Fatalf("after the kill: SET = %s", got)
	}
}

// formatValue renders a reply as nested quoted strings, for matching.
func formatValue(v resp.Value) string {
	switch v.Type {
	case '*', '%', '~':
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = formatValue(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case ':':
		return strconv.FormatInt(v.Int, 10)
	}
	if v.Null {
		return "nil"
	}
	return strconv.Quote(string(v.Str))
}
