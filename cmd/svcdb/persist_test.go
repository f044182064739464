package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/shard/rdb"
)

// client returns a go-redis client for addr with its default options,
// closed at cleanup.
func client(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// infoField reads one field of an INFO section.
func infoField(t *testing.T, c *redis.Client, section, name string) string {
	t.Helper()
	info, err := c.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	t.Fatalf("INFO %s has no %s:\n%s", section, name, info)
	return ""
}

func stop(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestSnapshotSurvivesRestart: SAVE, BGSAVE, LASTSAVE and INFO persistence
// through the real binary; every type and TTL comes back after a restart,
// and a SIGTERM with save rules set writes a final snapshot.
func TestSnapshotSurvivesRestart(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx := context.Background()
	cmd, addr, _ := startProcess(t, bin, "--data-dir", dir)
	c := client(t, addr)
	before := c.LastSave(ctx).Val()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Set(ctx, "s", "v", 0).Err())
	must(c.Set(ctx, "n", 12345, 0).Err())
	must(c.Set(ctx, "ttl", "x", time.Hour).Err())
	must(c.RPush(ctx, "l", "a", "b", "c").Err())
	must(c.SAdd(ctx, "si", 1, 2, 3).Err())
	must(c.SAdd(ctx, "ss", "x", "y").Err())
	must(c.HSet(ctx, "h", "f1", "v1", "f2", "v2").Err())
	must(c.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "a"}, redis.Z{Score: -2, Member: "b"}).Err())
	must(c.XAdd(ctx, &redis.XAddArgs{Stream: "st", ID: "1-1", Values: []string{"f", "v"}}).Err())
	c3 := redis.NewClient(&redis.Options{Addr: addr, DB: 3})
	defer c3.Close()
	must(c3.Set(ctx, "db3key", "three", 0).Err())
	for i := range 1000 {
		must(c.Set(ctx, fmt.Sprintf("k%d", i), i, 0).Err())
	}
	if got := infoField(t, c, "persistence", "rdb_changes_since_last_save"); got == "0" {
		t.Errorf("rdb_changes_since_last_save = 0 after writes")
	}
	time.Sleep(1100 * time.Millisecond) // LASTSAVE has one-second resolution
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatalf("SAVE: %v", err)
	}
	if after := c.LastSave(ctx).Val(); after <= before {
		t.Errorf("LASTSAVE %d did not advance from %d", after, before)
	}
	if got := infoField(t, c, "persistence", "rdb_changes_since_last_save"); got != "0" {
		t.Errorf("rdb_changes_since_last_save = %s after SAVE", got)
	}
	if got := infoField(t, c, "persistence", "rdb_last_bgsave_status"); got != "ok" {
		t.Errorf("rdb_last_bgsave_status = %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
	// A change after the snapshot is lost without save rules (as Redis):
	// SIGTERM does not save.
	must(c.Set(ctx, "after", "1", 0).Err())
	stop(t, cmd)

	cmd, addr, _ = startProcess(t, bin, "--data-dir", dir, "--save", "3600 1")
	c = client(t, addr)
	check := func(c *redis.Client, wantAfter bool) {
		t.Helper()
		if v := c.Get(ctx, "s").Val(); v != "v" {
			t.Errorf("s = %q", v)
		}
		if v := c.Get(ctx, "n").Val(); v != "12345" {
			t.Errorf("n = %q", v)
		}
		if ttl := c.TTL(ctx, "ttl").Val(); ttl < 59*time.Minute || ttl > time.Hour {
			t.Errorf("ttl = %v", ttl)
		}
		if v := c.LRange(ctx, "l", 0, -1).Val(); strings.Join(v, ",") != "a,b,c" {
			t.Errorf("l = %v", v)
		}
		if n := c.SCard(ctx, "si").Val(); n != 3 {
			t.Errorf("si card %d", n)
		}
		if enc := c.ObjectEncoding(ctx, "si").Val(); enc != "intset" {
			t.Errorf("si encoding %q", enc)
		}
		if ok := c.SIsMember(ctx, "ss", "y").Val(); !ok {
			t.Error("ss lost y")
		}
		if v := c.HGet(ctx, "h", "f2").Val(); v != "v2" {
			t.Errorf("h f2 = %q", v)
		}
		if s := c.ZScore(ctx, "z", "b").Val(); s != -2 {
			t.Errorf("z b = %v", s)
		}
		if xs := c.XRange(ctx, "st", "-", "+").Val(); len(xs) != 1 || xs[0].ID != "1-1" || xs[0].Values["f"] != "v" {
			t.Errorf("st = %v", xs)
		}
		if v := c.Get(ctx, "k999").Val(); v != "999" {
			t.Errorf("k999 = %q", v)
		}
		c3 := redis.NewClient(&redis.Options{Addr: c.Options().Addr, DB: 3})
		defer c3.Close()
		if v := c3.Get(ctx, "db3key").Val(); v != "three" {
			t.Errorf("db3key = %q", v)
		}
		if got := c.Exists(ctx, "after").Val() == 1; got != wantAfter {
			t.Errorf("key written after the snapshot present = %v, want %v", got, wantAfter)
		}
	}
	check(c, false)
	if got := infoField(t, c, "persistence", "rdb_last_load_keys_loaded"); got != "1010" {
		t.Errorf("rdb_last_load_keys_loaded = %s, want 1010", got)
	}
	// BGSAVE answers at once; the snapshot completes in the background.
	if v := c.BgSave(ctx).Val(); v != "Background saving started" {
		t.Errorf("BGSAVE = %q", v)
	}
	deadline := time.Now().Add(10 * time.Second)
	for infoField(t, c, "persistence", "rdb_bgsave_in_progress") != "0" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := infoField(t, c, "persistence", "rdb_saves"); got != "1" {
		t.Errorf("rdb_saves = %s after BGSAVE", got)
	}
	// With save rules set, SIGTERM writes a final snapshot.
	must(c.Set(ctx, "after", "1", 0).Err())
	stop(t, cmd)
	_, addr, _ = startProcess(t, bin, "--data-dir", dir)
	check(client(t, addr), true)
}

// TestSaveRulesSnapshotByThemselves: with "save 1 1", one change makes a
// snapshot within a couple of seconds, without any command asking.
func TestSaveRulesSnapshotByThemselves(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx := context.Background()
	_, addr, _ := startProcess(t, bin, "--data-dir", dir, "--save", "1 1")
	c := client(t, addr)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for infoField(t, c, "persistence", "rdb_saves") == "0" {
		if time.Now().After(deadline) {
			t.Fatal("no snapshot 5 s after a change with save \"1 1\"")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "dump.rdb")); err != nil {
		t.Fatal(err)
	}
}

// TestBadSnapshotRefusesToStart: a corrupt dump.rdb stops the server at
// start-up with an error naming the file, as Redis refuses to start.
func TestBadSnapshotRefusesToStart(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dump.rdb"), []byte("REDIS0010\xfa\x03bad"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", "0", "--data-dir", dir)
	out, err := cmd.CombinedOutput()
	if err == nil || cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), filepath.Join(dir, "dump.rdb")) {
		t.Errorf("the error does not name the file:\n%s", out)
	}
}

// TestLoadingAnswersLoading: while a large snapshot loads, the port already
// accepts connections and PING answers -LOADING, as Redis; once loaded, the
// data is all there.
func TestLoadingAnswersLoading(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	const keys = 3_000_000
	writeBigSnapshot(t, filepath.Join(dir, "dump.rdb"), keys)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--data-dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var sawLoading bool
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = c.Write([]byte("PING\r\n"))
		buf := make([]byte, 128)
		n, _ := c.Read(buf)
		c.Close()
		reply := string(buf[:n])
		if strings.HasPrefix(reply, "-LOADING Redis is loading the dataset in memory") {
			sawLoading = true
			continue
		}
		if reply == "+PONG\r\n" {
			break
		}
		t.Fatalf("PING = %q", reply)
	}
	if !sawLoading {
		t.Fatalf("never saw -LOADING while %d keys loaded", keys)
	}
	c := client(t, addr)
	if n := c.DBSize(context.Background()).Val(); n != keys {
		t.Errorf("DBSIZE = %d after loading, want %d", n, keys)
	}
	if got := infoField(t, c, "persistence", "loading"); got != "0" {
		t.Errorf("loading = %s after loading", got)
	}
}

// writeBigSnapshot writes an RDB file of n small string keys with the codec.
func writeBigSnapshot(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w := rdb.NewWriter(bw)
	if err := w.Header([2]string{"redis-ver", "7.0.15"}); err != nil {
		t.Fatal(err)
	}
	if err := w.SelectDB(0, uint64(n), 0); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	var key []byte
	for i := range n {
		key = strconv.AppendInt(append(key[:0], "key:"...), int64(i), 10)
		buf = rdb.AppendKey(buf[:0], rdb.TypeString, key, 0)
		buf = rdb.AppendString(buf, []byte("value-of-a-loaded-key"))
		if _, err := w.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBGSaveAndRewriteTakeTurns: one snapshot at a time, as Redis runs one
// child: BGSAVE during an AOF rewrite is refused with Redis' text, BGSAVE
// SCHEDULE starts one when the rewrite ends, and BGREWRITEAOF during a
// BGSAVE is scheduled after it.
func TestBGSaveAndRewriteTakeTurns(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	writeBigSnapshot(t, filepath.Join(dir, "dump.rdb"), 1_000_000) // a rewrite takes a while
	ctx := context.Background()
	_, addr, _ := startProcess(t, bin, "--data-dir", dir)
	c := client(t, addr)
	if v, err := c.BgRewriteAOF(ctx).Result(); err != nil || v != "Background append only file rewriting started" {
		t.Fatalf("BGREWRITEAOF = %q %v", v, err)
	}
	if err := c.BgSave(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "ERR Another child process is active (AOF?): can't BGSAVE right now.") {
		t.Fatalf("BGSAVE during a rewrite = %v", err)
	}
	if v, err := c.Do(ctx, "BGSAVE", "SCHEDULE").Text(); err != nil || v != "Background saving scheduled" {
		t.Fatalf("BGSAVE SCHEDULE during a rewrite = %q %v", v, err)
	}
	// The bounds below only catch a scheduled job that never runs: a
	// million-key rewrite or snapshot takes seconds, more on a loaded
	// machine.
	deadline := time.Now().Add(2 * time.Minute)
	for infoField(t, c, "persistence", "rdb_saves") != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the scheduled BGSAVE did not run after the rewrite")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := infoField(t, c, "persistence", "aof_rewrites"); got != "1" {
		t.Errorf("aof_rewrites = %s", got)
	}
	if v, err := c.BgSave(ctx).Result(); err != nil || v != "Background saving started" {
		t.Fatalf("BGSAVE = %q %v", v, err)
	}
	if v, err := c.BgRewriteAOF(ctx).Result(); err != nil || v != "Background append only file rewriting scheduled" {
		t.Fatalf("BGREWRITEAOF during a BGSAVE = %q %v", v, err)
	}
	deadline = time.Now().Add(2 * time.Minute)
	for infoField(t, c, "persistence", "aof_rewrites") != "2" {
		if time.Now().After(deadline) {
			t.Fatal("the scheduled rewrite did not run after the BGSAVE")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := infoField(t, c, "persistence", "rdb_last_bgsave_status"); got != "ok" {
		t.Errorf("rdb_last_bgsave_status = %s", got)
	}
}
