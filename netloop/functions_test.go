package netloop_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
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
