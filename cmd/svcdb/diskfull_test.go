package main

import (
	"context"
	crand "crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// smallDisk mounts a tmpfs of size bytes on a fresh directory (unmounted at
// cleanup) and fills all but free bytes of it with a file that release
// deletes: a disk that is full on demand. It needs root, as make test runs.
func smallDisk(t *testing.T, size, free int) (dir string, release func()) {
	t.Helper()
	dir = t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		msg := "mounting a small tmpfs for the disk-full test needs root: " + err.Error() + ": " + string(out)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg + " (set CI=true to make this a failure)")
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, size-free), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, func() {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDiskFullRefusesWritesThenRecovers: when the append-only file cannot
// be written, writes get -MISCONF (and under appendfsync always the reply of
// a write that did not reach the disk never comes), reads keep working, the
// error shows in INFO and the error counters; once space is back, writes
// are accepted again and nothing acknowledged is missing.
func TestDiskFullRefusesWritesThenRecovers(t *testing.T) {
	bin := buildBinary(t)
	dir, release := smallDisk(t, 1<<20, 96<<10)
	ctx := context.Background()
	cmd, addr, _ := startProcess(t, bin, "--data-dir", dir, "--appendonly", "yes", "--appendfsync", "always")
	c := client(t, addr)
	if err := c.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	val := strings.Repeat("v", 4096)
	var acked []string
	var refused error
	for i := 0; i < 200 && refused == nil; i++ {
		key := "k" + strconv.Itoa(i)
		err := c.Set(ctx, key, val, 0).Err()
		switch {
		case err == nil:
			acked = append(acked, key)
		case strings.HasPrefix(err.Error(), "MISCONF Errors writing to the AOF file"):
			refused = err
		default:
			t.Logf("write %d: %v", i, err)
			// The write whose fsync failed: no reply, the connection closed.
			// The next command (a new connection) sees the -MISCONF.
			time.Sleep(20 * time.Millisecond)
		}
	}
	if refused == nil {
		out, _ := exec.Command("df", dir).CombinedOutput()
		ls, _ := exec.Command("ls", "-laR", dir).CombinedOutput()
		t.Fatalf("200 writes of 4 KiB on a 96 KiB disk were all accepted\n%s\n%s\n%s", out, ls, c.Info(ctx, "persistence").Val())
	}
	t.Logf("refused after %d acknowledged writes: %v", len(acked), refused)
	if v, err := c.Get(ctx, "before").Result(); err != nil || v != "1" {
		t.Errorf("GET while writes are refused: %q %v", v, err)
	}
	if err := c.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "MISCONF") {
		t.Errorf("PING while writes are refused = %v; Redis refuses it with -MISCONF", err)
	}
	if got := infoField(t, c, "persistence", "aof_last_write_status"); got != "err" {
		t.Errorf("aof_last_write_status = %s", got)
	}
	if got := infoField(t, c, "persistence", "svc_persistence_errors_aof_write"); got == "0" {
		t.Errorf("svc_persistence_errors_aof_write = 0 after a failed write")
	}
	release()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Set(ctx, "after", "1", 0).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes still refused 10 s after the disk has space again: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := infoField(t, c, "persistence", "aof_last_write_status"); got != "ok" {
		t.Errorf("aof_last_write_status = %s after recovery", got)
	}
	stop(t, cmd)
	// Every acknowledged write survives a restart from the files.
	_, addr, _ = startProcess(t, bin, "--data-dir", dir, "--appendonly", "yes")
	c = client(t, addr)
	for _, k := range append(acked, "before", "after") {
		if n := c.Exists(ctx, k).Val(); n != 1 {
			t.Errorf("acknowledged key %s missing after restart", k)
		}
	}
}

// TestFailedSnapshotRefusesWrites: with save rules set, a BGSAVE that fails
// (no space for the file) makes writes fail with Redis' -MISCONF text until
// a snapshot succeeds again; reads work meanwhile.
func TestFailedSnapshotRefusesWrites(t *testing.T) {
	bin := buildBinary(t)
	dir, release := smallDisk(t, 1<<20, 16<<10)
	ctx := context.Background()
	_, addr, _ := startProcess(t, bin, "--data-dir", dir, "--save", "3600 1")
	c := client(t, addr)
	var val1 string
	rnd := make([]byte, 1000)
	for i := range 200 { // ~200 KB of random data: the snapshot cannot fit in 16 KiB, compressed or not
		_, _ = crand.Read(rnd)
		val := string(rnd)
		if i == 1 {
			val1 = val
		}
		if err := c.Set(ctx, "k"+strconv.Itoa(i), val, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waitSaveDone(t, c)
	if got := infoField(t, c, "persistence", "rdb_last_bgsave_status"); got != "err" {
		t.Fatalf("rdb_last_bgsave_status = %s on a full disk", got)
	}
	err := c.Set(ctx, "new", "1", 0).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "MISCONF Redis is configured to save RDB snapshots") {
		t.Fatalf("SET after a failed snapshot = %v, want -MISCONF", err)
	}
	if v := c.Get(ctx, "k1").Val(); v != val1 {
		t.Errorf("GET while writes are refused failed")
	}
	if got := infoField(t, c, "persistence", "svc_persistence_errors_rdb"); got == "0" {
		t.Errorf("svc_persistence_errors_rdb = 0 after a failed snapshot")
	}
	release()
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waitSaveDone(t, c)
	if err := c.Set(ctx, "new", "1", 0).Err(); err != nil {
		t.Fatalf("SET after a successful snapshot: %v", err)
	}
}

func waitSaveDone(t *testing.T, c *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for infoField(t, c, "persistence", "rdb_bgsave_in_progress") != "0" {
		if time.Now().After(deadline) {
			t.Fatal("BGSAVE still running after 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
