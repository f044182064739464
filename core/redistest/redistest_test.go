package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// send writes inline commands (each ending in \r\n) to a new connection
// to addr, closed by t.Cleanup, and returns its reader for the replies.
func send(t *testing.T, addr, commands string) *bufio.Reader {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(commands)); err != nil {
		t.Fatal(err)
	}
	return bufio.NewReader(c)
}

// readLine reads one reply line without its \r\n.
func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(line, "\r\n")
}

// do runs one inline command on addr and returns the first line of its
// reply.
func do(t *testing.T, addr, command string) string {
	t.Helper()
	return readLine(t, send(t, addr, command+"\r\n"))
}

func TestStartHasNoPersistence(t *testing.T) {
	r := send(t, Start(t), "CONFIG GET save\r\nCONFIG GET appendonly\r\n")
	var lines []string
	for len(lines) < 10 {
		lines = append(lines, readLine(t, r))
	}
	want := "*2 $4 save $0  *2 $10 appendonly $2 no"
	if got := strings.Join(lines, " "); got != want {
		t.Fatalf("CONFIG GET save, appendonly: %q, want %q", got, want)
	}
}

// TestStartServerUsesDirAndArgs: SAVE writes into Dir under the dbfilename
// given as an argument, and a second server on that Dir is returned only
// once it has loaded the file (PING no longer answers -LOADING).
func TestStartServerUsesDirAndArgs(t *testing.T) {
	dir := t.TempDir()
	s := StartServer(t, dir, "--save", "", "--appendonly", "no", "--dbfilename", "x.rdb",
		"--enable-debug-command", "yes")
	if s.Dir != dir {
		t.Fatalf("Dir %q, want %q", s.Dir, dir)
	}
	if got := do(t, s.Addr, "DEBUG POPULATE 200000"); got != "+OK" {
		t.Fatalf("DEBUG POPULATE: %s", got)
	}
	if got := do(t, s.Addr, "SAVE"); got != "+OK" {
		t.Fatalf("SAVE: %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.rdb")); err != nil {
		t.Fatal(err)
	}
	s.Stop()

	loaded := StartServer(t, dir, "--save", "", "--appendonly", "no", "--dbfilename", "x.rdb")
	if got := do(t, loaded.Addr, "DBSIZE"); got != ":200000" {
		t.Fatalf("DBSIZE after load: %s\n%s", got, loaded.Log())
	}
	if !strings.Contains(loaded.Log(), "DB loaded from disk") {
		t.Fatalf("log does not say it loaded:\n%s", loaded.Log())
	}
}

// TestStopIsIdempotent: Stop kills the process, closes Exited, frees the
// port, and may be called again (t.Cleanup calls it once more).
func TestStopIsIdempotent(t *testing.T) {
	s := StartServer(t, t.TempDir(), "--save", "")
	s.Stop()
	select {
	case <-s.Exited():
	default:
		t.Fatal("Exited still open after Stop")
	}
	s.Stop()
	if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after Stop", s.Addr)
	}
}

// TestShutdownClosesExited: a server that exits by itself (SHUTDOWN NOSAVE)
// closes Exited, and Stop afterwards returns at once.
func TestShutdownClosesExited(t *testing.T) {
	s := StartServer(t, t.TempDir(), "--save", "")
	send(t, s.Addr, "SHUTDOWN NOSAVE\r\n")
	select {
	case <-s.Exited():
	case <-time.After(10 * time.Second):
		t.Fatalf("no exit after SHUTDOWN:\n%s", s.Log())
	}
	s.Stop()
}

// TestTakenPortIsRetried: when the first port handed out is held by another
// redis-server, StartServer neither takes that server's PONG for its own nor
// gives up: it retries on a fresh port.
func TestTakenPortIsRetried(t *testing.T) {
	other := StartServer(t, t.TempDir(), "--save", "")
	_, portText, _ := net.SplitHostPort(other.Addr)
	taken, _ := strconv.Atoi(portText)

	real := freePort
	calls := 0
	freePort = func() (int, error) {
		calls++
		if calls == 1 {
			return taken, nil
		}
		return real()
	}
	defer func() { freePort = real }()

	s := StartServer(t, t.TempDir(), "--save", "")
	if s.Addr == other.Addr || calls != 2 {
		t.Fatalf("started on %s after %d ports; the taken one was %s", s.Addr, calls, other.Addr)
	}
	want := "process_id:" + strconv.Itoa(s.cmd.Process.Pid)
	if info := infoServer(t, s.Addr); !strings.Contains(info, want) {
		t.Fatalf("%s is not the started process (%s):\n%s", s.Addr, want, info)
	}
}

// infoServer returns INFO server's text from addr.
func infoServer(t *testing.T, addr string) string {
	t.Helper()
	r := send(t, addr, "INFO server\r\n")
	head := readLine(t, r)
	n, err := strconv.Atoi(strings.TrimPrefix(head, "$"))
	if err != nil {
		t.Fatalf("INFO reply %q", head)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// recordingTB is a testing.TB whose Fatal and Skip are recorded instead of
// ending the real test; like the real ones, they end the calling goroutine.
type recordingTB struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fatal(args ...any) {
	r.failed, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *recordingTB) Fatalf(format string, args ...any) { r.Fatal(fmt.Sprintf(format, args...)) }
func (r *recordingTB) Skip(args ...any) {
	r.skipped, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}

// TestMissingRedisServer: without redis-server on PATH, StartServer fails
// the test under CI=true and skips it otherwise.
func TestMissingRedisServer(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, ci := range []string{"true", ""} {
		t.Setenv("CI", ci)
		rec := &recordingTB{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			StartServer(rec, t.TempDir())
			t.Error("StartServer returned without redis-server")
		}()
		<-done
		if ci == "true" && (!rec.failed || rec.skipped) || ci == "" && (!rec.skipped || rec.failed) {
			t.Errorf("CI=%q: failed=%v skipped=%v (%s)", ci, rec.failed, rec.skipped, rec.msg)
		}
		if !strings.Contains(rec.msg, "redis-server is required") {
			t.Errorf("CI=%q: message %q", ci, rec.msg)
		}
	}
}
