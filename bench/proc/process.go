package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Spec describes a process to start.
type Spec struct {
	// Name labels the process in errors and logs ("svcdb", "redis").
	Name string
	// Path is the executable; Args its arguments (without argv[0]).
	Path string
	Args []string
	// CPUs, when non-empty, is a taskset(1) CPU list ("0", "1-3") the process
	// is pinned to. The caller decides whether pinning makes sense
	// (see CanPin); Start fails if taskset is not installed.
	CPUs string
	// Dir is the working directory; "" means the caller's. Servers should get
	// a temporary directory so that a dump.rdb or log never lands in the
	// checkout.
	Dir string

	// Stdout, if not nil, also receives a client's standard output as it is
	// written (Run only; RunResult.Stdout still has all of it). Writes come
	// from another goroutine and have all happened when Run returns.
	Stdout io.Writer
	// OnStart, if not nil, is called by Run with the client's pid as soon as
	// it has started (the program's own pid: taskset execs it).
	OnStart func(pid int)
}

// Process is a started process, the leader of its own process group.
// Its methods are safe for concurrent use.
type Process struct {
	Name string
	cmd  *exec.Cmd
	out  *tailBuffer

	done    chan struct{} // closed when Wait returned
	waitErr error         // valid after done is closed

	stopOnce sync.Once
	stopErr  error
}

// tailLimit bounds the output kept per process: enough for a startup error
// or a panic's first lines, never a growing log.
const tailLimit = 64 << 10

// Start starts spec's process in a new process group. The caller must call
// Stop (or use a Group), also on error paths.
func Start(spec Spec) (*Process, error) {
	// A server lives until Stop, not until some context ends.
	cmd, err := command(context.Background(), spec)
	if err != nil {
		return nil, err
	}
	out := &tailBuffer{limit: tailLimit}
	cmd.Stdout = out
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Path, err)
	}
	p := &Process{Name: spec.Name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// command builds the exec.Cmd for spec: wrapped in taskset when pinned, in
// its own process group.
func command(ctx context.Context, spec Spec) (*exec.Cmd, error) {
	path, args := spec.Path, spec.Args
	// A relative path with a slash ("bin/svcdb") means relative to our
	// working directory, but the child starts in spec.Dir: resolve it now.
	if strings.Contains(path, "/") && !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		path = abs
	}
	if spec.CPUs != "" {
		ts, err := exec.LookPath("taskset")
		if err != nil {
			return nil, fmt.Errorf("%s: pinning to CPUs %q needs taskset: %w", spec.Name, spec.CPUs, err)
		}
		// taskset execs the program, so the pid we get is the program's own
		// pid and /proc/<pid> accounting sees it, not a wrapper.
		args = append([]string{"-c", spec.CPUs, path}, args...)
		path = ts
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = spec.Dir
	cmd.SysProcAttr = sysProcAttr()
	return cmd, nil
}

// RunResult is what Run returns about a finished short-lived process.
type RunResult struct {
	Stdout []byte
	Stderr string // last bytes only
	// CPU is the user+system time the process used.
	CPU  time.Duration
	Wall time.Duration
}

// Run runs spec to completion (a client such as redis-benchmark) and returns
// its output. If ctx ends first, the whole process group is killed. A
// non-zero exit is an error that quotes the tail of stderr.
func Run(ctx context.Context, spec Spec) (RunResult, error) {
	var r RunResult
	cmd, err := command(ctx, spec)
	if err != nil {
		return r, err
	}
	var stdout bytes.Buffer
	stderr := &tailBuffer{limit: 8 << 10}
	cmd.Stdout = &stdout
	if spec.Stdout != nil {
		cmd.Stdout = io.MultiWriter(&stdout, spec.Stdout)
	}
	cmd.Stderr = stderr
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return r, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Path, err)
	}
	if spec.OnStart != nil {
		spec.OnStart(cmd.Process.Pid)
	}
	err = cmd.Wait()
	r.Wall = time.Since(start)
	// Sweep the group in case the client left children behind.
	_ = killGroup(cmd.Process.Pid, syscall.SIGKILL)
	r.Stdout, r.Stderr = stdout.Bytes(), stderr.String()
	if cmd.ProcessState != nil {
		r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		if ctx.Err() != nil {
			return r, fmt.Errorf("%s: %w", spec.Name, context.Cause(ctx))
		}
		return r, fmt.Errorf("%s: %w; stderr: %s", spec.Name, err, strings.TrimSpace(r.Stderr))
	}
	return r, nil
}

// Pid returns the process id (also its process group id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has exited, and its wait error if so.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Output returns the last bytes the process wrote to stdout and stderr.
func (p *Process) Output() string { return p.out.String() }

// CommandLine returns the command line as started, for reports.
func (p *Process) CommandLine() string { return QuoteArgs(p.cmd.Args) }

// QuoteArgs joins args for display, single-quoting those a POSIX shell
// would split or expand, and empty ones (so redis-server's empty --save
// value stays visible), so that a printed command line can be pasted back
// into a shell.
func QuoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, needsQuote) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func needsQuote(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@%+", r))
}

// Stop sends SIGTERM to the process group, waits up to grace for the leader
// to exit, then sends SIGKILL to the group. It is idempotent. An exit caused
// by our SIGTERM is not an error; needing SIGKILL is, as is an exit before
// Stop with a non-zero status.
func (p *Process) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		pgid := p.Pid()
		select {
		case <-p.done:
			// Already gone; still sweep the group in case it left children.
			_ = killGroup(pgid, syscall.SIGKILL)
			p.stopErr = unexpectedExit(p.waitErr)
			return
		default:
		}
		_ = killGroup(pgid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			_ = killGroup(pgid, syscall.SIGKILL)
			<-p.done
			// Worth knowing for a server: its graceful shutdown hangs.
			p.stopErr = fmt.Errorf("did not exit within %v of SIGTERM; killed", grace)
		}
		// Children the leader did not take down with it.
		_ = killGroup(pgid, syscall.SIGKILL)
	})
	return p.stopErr
}

func unexpectedExit(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() &&
			(ws.Signal() == syscall.SIGTERM || ws.Signal() == syscall.SIGKILL) {
			return nil
		}
	}
	return err
}

// Group tracks started processes so they can all be stopped at once, from a
// defer or a signal handler. It is safe for concurrent use.
type Group struct {
	mu    sync.Mutex
	procs []*Process
}

// Start starts spec and adds the process to the group.
func (g *Group) Start(spec Spec) (*Process, error) {
	p, err := Start(spec)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.procs = append(g.procs, p)
	g.mu.Unlock()
	return p, nil
}

// StopAll stops every process of the group concurrently (so the total wait is
// one grace period, not one per process) and forgets them.
func (g *Group) StopAll(grace time.Duration) error {
	g.mu.Lock()
	procs := g.procs
	g.procs = nil
	g.mu.Unlock()
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Stop(grace); err != nil {
				errs[i] = fmt.Errorf("%s (pid %d): %w", p.Name, p.Pid(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
// Another process can take it before the server binds it; StartServer retries.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitReady polls addr with a RESP PING until it answers +PONG, the process
// exits, or ctx ends. A server that answers an error (-LOADING ...) is not
// ready yet.
func WaitReady(ctx context.Context, addr string, p *Process) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if exited, werr := p.Exited(); exited {
			return fmt.Errorf("%s exited before answering PING on %s: %v; output:\n%s", p.Name, addr, werr, p.Output())
		}
		if last = ping(ctx, addr); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer PING on %s: %w (last error: %v); output:\n%s", p.Name, addr, ctx.Err(), last, p.Output())
		case <-p.done:
		case <-tick.C:
		}
	}
}

func ping(ctx context.Context, addr string) error {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	return nil
}

// ServerSpec is a Redis-protocol server to start on a free 127.0.0.1 port.
type ServerSpec struct {
	Name string
	Path string
	// Args are passed after "--port N --bind 127.0.0.1".
	Args []string
	CPUs string
	Dir  string
}

// Server is a started server and its address.
type Server struct {
	*Process
	Addr string
	Port int
}

// StartServer starts spec in g on a free port, adding "--port N --bind
// 127.0.0.1" in front of spec.Args, and waits until it answers PING. If the
// server exits before that (for instance because another process took the
// port in the meantime), it retries on a new port, up to three times.
func StartServer(ctx context.Context, g *Group, spec ServerSpec, readyTimeout time.Duration) (*Server, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		args := append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1"}, spec.Args...)
		p, err := g.Start(Spec{Name: spec.Name, Path: spec.Path, Args: args, CPUs: spec.CPUs, Dir: spec.Dir})
		if err != nil {
			return nil, err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		rctx, cancel := context.WithTimeout(ctx, readyTimeout)
		err = WaitReady(rctx, addr, p)
		cancel()
		if err == nil {
			return &Server{Process: p, Addr: addr, Port: port}, nil
		}
		lastErr = err
		_ = p.Stop(2 * time.Second)
		if exited, _ := p.Exited(); !exited || ctx.Err() != nil {
			break // alive but mute, or cancelled: retrying will not help
		}
	}
	return nil, lastErr
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	cut   bool
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
		b.cut = true
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cut {
		return "[...]" + string(b.buf)
	}
	return string(b.buf)
}
