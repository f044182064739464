package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/svcdb/svcdb/core/redistest"
)

const functionsTestLib = "#!lua name=fnpersist\n" +
	"redis.register_function('fp_echo', function(keys, args) return 'fp:' .. args[1] end)\n" +
	"redis.register_function{function_name='fp_ro', flags={'no-writes'}, description='d', callback=function() return 7 end}\n"

// checkFunctions fails unless the test library answers at addr.
func checkFunctions(t *testing.T, addr, who string) {
	t.Helper()
	ctx := context.Background()
	c := client(t, addr)
	if v, err := c.FCall(ctx, "fp_echo", nil, "x").Text(); err != nil || v != "fp:x" {
		t.Fatalf("%s: FCALL fp_echo = %q, %v", who, v, err)
	}
	if v, err := c.FCallRO(ctx, "fp_ro", nil).Int(); err != nil || v != 7 {
		t.Fatalf("%s: FCALL_RO fp_ro = %d, %v", who, v, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Function libraries travel in dump.rdb both ways between svcdb and a
// real redis-server 7.0 (RDB_OPCODE_FUNCTION2), and survive a restart
// from svcdb's append-only file.
func TestFunctionsPersistence(t *testing.T) {
	bin := buildBinary(t)
	ctx := context.Background()

	t.Run("svcdb rdb to redis", func(t *testing.T) {
		dir := t.TempDir()
		cmd, addr, _ := startProcess(t, bin, "--data-dir", dir)
		c := client(t, addr)
		if err := c.FunctionLoad(ctx, functionsTestLib).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		stop(t, cmd)
		rdir := t.TempDir()
		copyFile(t, filepath.Join(dir, "dump.rdb"), filepath.Join(rdir, "dump.rdb"))
		r := redistest.StartServer(t, rdir, "--appendonly", "no")
		checkFunctions(t, r.Addr, "redis-server loading svcdb's dump.rdb")
	})

	t.Run("redis rdb to svcdb", func(t *testing.T) {
		rdir := t.TempDir()
		r := redistest.StartServer(t, rdir, "--appendonly", "no")
		rc := client(t, r.Addr)
		if err := rc.FunctionLoad(ctx, functionsTestLib).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rc.Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		copyFile(t, filepath.Join(rdir, "dump.rdb"), filepath.Join(dir, "dump.rdb"))
		cmd, addr, _ := startProcess(t, bin, "--data-dir", dir)
		checkFunctions(t, addr, "svcdb loading redis-server's dump.rdb")
		stop(t, cmd)
	})

	t.Run("aof restart", func(t *testing.T) {
		dir := t.TempDir()
		cmd, addr, _ := startProcess(t, bin, "--data-dir", dir, "--appendonly", "yes")
		c := client(t, addr)
		if err := c.FunctionLoad(ctx, "#!lua name=gone\nredis.register_function('gone', function() return 1 end)").Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.FunctionLoad(ctx, functionsTestLib).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.FunctionDelete(ctx, "gone").Err(); err != nil {
			t.Fatal(err)
		}
		stop(t, cmd)
		cmd, addr, _ = startProcess(t, bin, "--data-dir", dir, "--appendonly", "yes")
		checkFunctions(t, addr, "svcdb restarted from its AOF")
		c = client(t, addr)
		if err := c.FCall(ctx, "gone", nil).Err(); err == nil || err.Error() != "ERR Function not found" {
			t.Fatalf("deleted library's function after restart: %v", err)
		}
		stop(t, cmd)
	})
}
