package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// TestSparePWhenPinned runs the binary pinned to one CPU (taskset) and
// checks over TCP that it serves, and from its ready line that it runs two
// Ps (spareP), or one where the environment asks for it.
func TestSparePWhenPinned(t *testing.T) {
	taskset, err := exec.LookPath("taskset")
	if err != nil {
		t.Fatalf("taskset (util-linux) is needed: %v", err)
	}
	bin := buildBinary(t)
	pinned := filepath.Join(t.TempDir(), "svcdb-pinned")
	script := "#!/bin/sh\nexec " + taskset + " -c 0 " + bin + " \"$@\"\n"
	if err := os.WriteFile(pinned, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	procsRe := regexp.MustCompile(`gomaxprocs=(\d+)`)
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"default", []string{"GOMAXPROCS="}, "2"},
		{"environment", []string{"GOMAXPROCS=1"}, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, addr, stderr, stdout := startProcessEnv(t, pinned, tc.env, "--shards", "2", "--http-port", "0")
			if got := roundTrip(t, addr, "PING\r\n"); got != "+PONG\r\n" {
				t.Fatalf("PING: %q", got)
			}
			var m []string
			for deadline := time.Now().Add(5 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				m = procsRe.FindStringSubmatch(stdout.String())
			}
			if m == nil || m[1] != tc.want {
				t.Fatalf("gomaxprocs %v, want %s; stdout:\n%s", m, tc.want, stdout)
			}
			_ = cmd.Process.Signal(os.Interrupt)
			if code := waitExit(t, cmd); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
		})
	}
}
