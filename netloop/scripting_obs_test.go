package netloop_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// scriptInfoField matches INFO memory's scripting fields (Redis 7.0.15's
// used_memory_lua, used_memory_vm_*, *_scripts*, *functions*, *libraries*).
var scriptInfoField = regexp.MustCompile(`^(used_memory_lua|used_memory_vm_|used_memory_scripts|number_of_cached_scripts|number_of_functions|number_of_libraries|used_memory_functions)`)

// scriptInfo returns INFO memory's scripting fields in order, and by name.
func scriptInfo(t *testing.T, c *redis.Client) (names []string, vals map[string]int64) {
	t.Helper()
	vals = map[string]int64{}
	for _, line := range strings.Split(c.Info(context.Background(), "memory").Val(), "\r\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || !scriptInfoField.MatchString(name) {
			continue
		}
		names = append(names, name)
		if n, err := strconv.ParseInt(val, 10, 64); err == nil {
			vals[name] = n
		}
	}
	return names, vals
}

// TestScriptInfoMemoryAsRedis: INFO memory has Redis 7.0.15's scripting
// fields, in its order, and their values follow what is loaded: the
// counts as Redis', the VM sizes measured (they grow with a script and a
// library), used_memory_scripts the sum of the eval and function parts.
func TestScriptInfoMemoryAsRedis(t *testing.T) {
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: redistest.Start(t)})
	defer rc.Close()
	ts := startServer(t)
	sc := redis.NewClient(&redis.Options{Addr: ts.Addr})
	defer sc.Close()

	want, _ := scriptInfo(t, rc)
	got, before := scriptInfo(t, sc)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("scripting fields:\n got %v\nwant %v", got, want)
	}
	if before["used_memory_vm_eval"] <= 0 || before["used_memory_lua"] != before["used_memory_vm_eval"] {
		t.Errorf("VM size at start: %v", before)
	}

	const lib = "#!lua name=obslib\nlocal big = {}\nfor i = 1, 1000 do big[i] = 'x' .. i end\n" +
		"redis.register_function('f1', function(keys, args) return #big end)\n" +
		"redis.register_function{function_name='f2', callback=function(keys, args) return 2 end, description='two'}\n"
	for _, c := range []*redis.Client{rc, sc} {
		if err := c.FunctionLoad(ctx, lib).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Eval(ctx, "return {1,2,3,'some longer string to count'}", nil).Err(); err != nil {
			t.Fatal(err)
		}
	}
	_, rv := scriptInfo(t, rc)
	_, after := scriptInfo(t, sc)
	for _, name := range []string{"number_of_cached_scripts", "number_of_functions", "number_of_libraries"} {
		if after[name] != rv[name] {
			t.Errorf("%s = %d, redis-server %d", name, after[name], rv[name])
		}
	}
	if after["used_memory_vm_eval"] <= before["used_memory_vm_eval"] {
		t.Errorf("used_memory_vm_eval %d after a script, %d before", after["used_memory_vm_eval"], before["used_memory_vm_eval"])
	}
	// the library's 1000-string table is an upvalue of its functions
	if grew := after["used_memory_vm_functions"] - before["used_memory_vm_functions"]; grew < 1000*16 {
		t.Errorf("used_memory_vm_functions grew by %d with a 1000-string library", grew)
	}
	if after["used_memory_vm_total"] != after["used_memory_vm_eval"]+after["used_memory_vm_functions"] {
		t.Errorf("vm_total %d is not eval + functions: %v", after["used_memory_vm_total"], after)
	}
	if after["used_memory_functions"] < int64(len(lib)) {
		t.Errorf("used_memory_functions %d < the library's %d code bytes", after["used_memory_functions"], len(lib))
	}
	if after["used_memory_scripts"] != after["used_memory_scripts_eval"]+after["used_memory_functions"] {
		t.Errorf("used_memory_scripts is not eval + functions: %v", after)
	}
	sc.FunctionFlush(ctx)
	if _, v := scriptInfo(t, sc); v["number_of_libraries"] != 0 || v["used_memory_functions"] != 0 {
		t.Errorf("after FUNCTION FLUSH: %v", v)
	}
}
