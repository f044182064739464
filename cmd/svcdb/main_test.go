package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/status"
)

// buildBinary compiles cmd/svcdb once per test binary run.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "svcdb")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startProcess runs the real binary on an ephemeral port and returns its
// address (read from its "listening on" line). The process is killed at
// cleanup if the test has not stopped it.
func startProcess(t *testing.T, bin string, args ...string) (*exec.Cmd, string, *lockedBuffer) {
	t.Helper()
	cmd, addr, stderr, _ := startProcessEnv(t, bin, nil, args...)
	return cmd, addr, stderr
}

// lockedBuffer collects a process's output: exec's copying goroutine
// writes stderr into it (Write) and the stdout reader adds lines (add)
// while the test reads it (String).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) add(line string) {
	b.mu.Lock()
	b.buf.WriteString(line + "\n")
	b.mu.Unlock()
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startTimeout bounds how long a server may take to print "listening on"
// (it loads its data first: a test's million-key snapshot takes seconds on
// a loaded machine). It only catches a server that hangs while starting; a
// server that exits is reported at once.
const startTimeout = 2 * time.Minute

var listeningRe = regexp.MustCompile(`listening on (\S+)`)

func startProcessEnv(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, string, *lockedBuffer, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--port", "0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out := &lockedBuffer{}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	addrCh := make(chan string, 1)
	closed := make(chan struct{}) // stdout ended: the process exited
	go func() {
		defer close(closed)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.add(sc.Text())
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				addrCh <- m[1]
			}
		}
	}()
	select {
	case addr := <-addrCh:
		return cmd, addr, stderr, out
	case <-closed:
		select {
		case addr := <-addrCh:
			return cmd, addr, stderr, out
		default:
		}
		t.Fatalf("server exited before listening; stdout:\n%s\nstderr:\n%s", out, stderr)
	case <-time.After(startTimeout):
		t.Fatalf("server did not start within %v; stdout:\n%s\nstderr:\n%s", startTimeout, out, stderr)
	}
	return nil, "", nil, nil
}

func roundTrip(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, _ := c.Read(buf)
	return string(buf[:n])
}

func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() // the status is read from ProcessState
	select {
	case <-done:
		return cmd.ProcessState.ExitCode()
	case <-time.After(15 * time.Second):
		t.Fatal("process did not exit")
	}
	return -1
}

func TestBinaryLifecycle(t *testing.T) {
	bin := buildBinary(t)

	t.Run("sigterm", func(t *testing.T) {
		cmd, addr, stderr := startProcess(t, bin, "--shards", "3", "--event-loops", "1")
		if got := roundTrip(t, addr, "PING\r\n"); got != "+PONG\r\n" {
			t.Fatalf("PING: %q", got)
		}
		if got := roundTrip(t, addr, "INFO svc\r\n"); !strings.Contains(got, "svc_shards:3") || !strings.Contains(got, "svc_event_loops:1") {
			t.Fatalf("flags not applied: %q", got)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := waitExit(t, cmd); code != 0 {
			t.Fatalf("exit code %d after SIGTERM; stderr:\n%s", code, stderr)
		}
	})

	t.Run("shutdown command", func(t *testing.T) {
		cmd, addr, stderr, out := startProcessEnv(t, bin, nil)
		roundTrip(t, addr, "SHUTDOWN\r\n")
		if code := waitExit(t, cmd); code != 0 {
			t.Fatalf("exit code %d after SHUTDOWN; stderr:\n%s", code, stderr)
		}
		if !strings.Contains(out.String(), "user requested shutdown") {
			t.Fatalf("shutdown not logged:\n%s", out)
		}
	})

	t.Run("help and version", func(t *testing.T) {
		out, err := exec.Command(bin, "--help").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--event-loops") || !strings.Contains(string(out), "--shards") {
			t.Fatalf("--help: %v\n%s", err, out)
		}
		out, err = exec.Command(bin, "--version").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "svcdb ") {
			t.Fatalf("--version: %v\n%s", err, out)
		}
	})

	t.Run("bad flags exit 2", func(t *testing.T) {
		for _, args := range [][]string{
			{"--no-such-flag"},
			{"--shards", "0"},
			{"--shards", "100000"},
			{"--drain-strategy", "bogus"},
			{"--port", "70000"},
			{"stray-argument"},
		} {
			cmd := exec.Command(bin, args...)
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 2 {
				t.Errorf("%v: exit %d; want 2\n%s", args, code, out)
			}
			if len(out) == 0 {
				t.Errorf("%v: no message", args)
			}
		}
	})

	t.Run("port in use", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		port := ln.Addr().(*net.TCPAddr).Port
		cmd := exec.Command(bin, "--port", strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:"))
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code == 0 {
			t.Fatalf("started on busy port %d:\n%s", port, out)
		}
	})
}

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("go"); err != nil {
		// The test builds the binary; make test always has go on PATH.
		os.Stderr.WriteString("go not on PATH\n")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// TestStatusJSONBinary: the real binary serves GET /status/json publicly (a
// token is configured and not needed, and never shown), and it is the same
// document, byte for byte, as STATUS JSON on the Redis port when both
// describe the same instant (see diaghttp's TestStatusJSONSameAsCommand for
// why a few attempts may be needed).
func TestStatusJSONBinary(t *testing.T) {
	bin := buildBinary(t)
	cmd, addr, _, out := startProcessEnv(t, bin, []string{"SVC_HTTP_TOKEN=t0ken-value"}, "--http-port", "0", "--shards", "3")
	m := regexp.MustCompile(`diagnostics on (http://\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no diagnostics address in the output:\n%s", out)
	}
	get := func() (int, http.Header, string) {
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(m[1] + "/status/json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rd := bufio.NewReader(c)
	do := func(args ...string) string { // one command; returns the bulk or status payload
		t.Helper()
		req := fmt.Sprintf("*%d\r\n", len(args))
		for _, a := range args {
			req += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(line, "$") {
			return strings.TrimSpace(line)
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			t.Fatal(err)
		}
		return string(buf[:n])
	}
	for i := range 30 {
		if r := do("SET", "k"+strconv.Itoa(i), "v"); r != "+OK" {
			t.Fatalf("SET: %q", r)
		}
	}
	do("STATUS", "JSON") // this connection is counted before comparing

	code, hdr, body := get()
	if code != 200 || hdr.Get("Content-Type") != "application/json" || hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET /status/json: %d %v %.300s", code, hdr, body)
	}
	var d status.Document
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	if d.Svc.Version != version || d.Svc.GitCommit == "" || d.Svc.PID != cmd.Process.Pid || d.Svc.State != status.StateReady ||
		d.Health.Status != status.Healthy || len(d.Shards) != 3 || d.Cluster.Address != addr ||
		len(d.Keyspace.Databases) != 1 || d.Keyspace.Databases[0].Keys != 30 {
		t.Fatalf("document: %s", body)
	}
	if strings.Contains(body, "t0ken-value") {
		t.Fatalf("the HTTP token is in the status document")
	}
	var last [2]string
	for attempt := range 50 {
		_, _, h := get()
		r := do("STATUS", "JSON")
		if h == r {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			if code := waitExit(t, cmd); code != 0 {
				t.Fatalf("exit %d", code)
			}
			return
		}
		last = [2]string{h, r}
		time.Sleep(time.Duration(attempt) * time.Millisecond)
	}
	t.Fatalf("GET /status/json and STATUS JSON never identical; last:\n%s\n%s", last[0], last[1])
}
