package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestSplitArgs(t *testing.T) {
	f := func(in string, want ...string) {
		t.Helper()
		got, err := SplitArgs(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	f("")
	f("   ")
	f("--shards 4 --event-loops 2", "--shards", "4", "--event-loops", "2")
	f("--save '' --appendonly no", "--save", "", "--appendonly", "no")
	f(`--save ""`, "--save", "")
	f(`a"b c"d 'e f'`, "ab cd", "e f")
	f(`"say \"hi\" \\ \n"`, `say "hi" \ \n`)
	f(`x\ y`, "x y")
	for _, bad := range []string{`'open`, `"open`, `trailing\`} {
		if _, err := SplitArgs(bad); err == nil {
			t.Errorf("SplitArgs(%q): want an error", bad)
		}
	}
}

func TestQuoteArgsRoundTrip(t *testing.T) {
	for _, args := range [][]string{
		{"redis-server", "--save", "", "--port", "6379"},
		{"it's", "a b", "$HOME", "*", "x=y,z:1"},
	} {
		got, err := SplitArgs(QuoteArgs(args))
		if err != nil || !slices.Equal(got, args) {
			t.Errorf("SplitArgs(QuoteArgs(%q)) = %q, %v (quoted: %s)", args, got, err, QuoteArgs(args))
		}
	}
	if q := QuoteArgs([]string{"--save", ""}); q != "--save ''" {
		t.Errorf("QuoteArgs: %s; want --save ''", q)
	}
}

func TestParseCPUList(t *testing.T) {
	f := func(in string, want []int, ok bool) {
		t.Helper()
		got, err := ParseCPUList(in)
		if (err == nil) != ok || !slices.Equal(got, want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v, ok=%v", in, got, err, want, ok)
		}
	}
	f("0", []int{0}, true)
	f("1-3", []int{1, 2, 3}, true)
	f("0,2-3", []int{0, 2, 3}, true)
	f("", nil, false)
	f("3-1", nil, false)
	f("a", nil, false)
	f("-1", nil, false)
}

func TestParseStatTicks(t *testing.T) {
	// comm with spaces and a parenthesis, as a process may name itself.
	stat := "1234 (my (odd) proc) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 125 0 0 20 0 4 0 100 1000 10 0\n"
	got, err := parseStatTicks([]byte(stat))
	if err != nil || got != 375 {
		t.Fatalf("parseStatTicks = %d, %v; want 375", got, err)
	}
	if _, err := parseStatTicks([]byte("1234 (x) S 1 2")); err == nil {
		t.Fatal("short stat: want an error")
	}
}

func TestParseProcStat(t *testing.T) {
	const stat = `cpu  665022 0 294156 838560 4021 0 51745 12485 0 0
cpu0 345249 1 137424 416550 940 0 27394 5898 0 0
cpu1 319773 0 156732 422010 3081 0 24350 6587 0 0
intr 53498971 0 0 0
`
	f := func(cpus []int, busy, steal uint64, wantErr string) {
		t.Helper()
		got, err := parseProcStat([]byte(stat), cpus)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("cpus %v: err %v; want one containing %q", cpus, err, wantErr)
			}
			return
		}
		want := CPUTimes{Busy: time.Duration(busy) * clockTick, Steal: time.Duration(steal) * clockTick}
		if err != nil || got != want {
			t.Errorf("cpus %v: %+v, %v; want %+v", cpus, got, err, want)
		}
	}
	f(nil, 665022+294156, 12485, "")
	f([]int{0}, 345249+1+137424, 5898, "")
	f([]int{0, 1}, 345249+1+137424+319773+156732, 5898+6587, "")
	f([]int{2}, 0, 0, "found 0 of the 1 CPU lines")
	if _, err := parseProcStat([]byte("cpu0 1 2 3\n"), []int{0}); err == nil {
		t.Error("short cpu line: want an error")
	}
	if _, err := ReadCPUTimes([]int{0}); err != nil {
		t.Errorf("ReadCPUTimes: %v", err)
	}
	d := CPUTimes{Busy: 5, Steal: 3}.Sub(CPUTimes{Busy: 2, Steal: 1})
	if d != (CPUTimes{Busy: 3, Steal: 2}) {
		t.Errorf("Sub: %+v", d)
	}
}

func TestCPUSampleTotal(t *testing.T) {
	f := func(s CPUSample, want time.Duration) {
		t.Helper()
		if got := s.Total(); got != want {
			t.Errorf("%+v.Total() = %v; want %v", s, got, want)
		}
	}
	f(CPUSample{Sched: 1234 * time.Microsecond, Ticks: 0}, 1234*time.Microsecond)
	f(CPUSample{Sched: 1234 * time.Millisecond, Ticks: 1240 * time.Millisecond}, 1234*time.Millisecond)
	f(CPUSample{Sched: 0, Ticks: 50 * time.Millisecond}, 50*time.Millisecond)
	// Threads exited: ticks well ahead of the live threads' schedstat.
	f(CPUSample{Sched: 100 * time.Millisecond, Ticks: 900 * time.Millisecond}, 900*time.Millisecond)
}

func rusageSelf() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestReadCPUSeesWork spins until getrusage says this process used 200 ms
// more CPU (wall time would be flaky on a loaded machine) and checks that
// ReadCPU saw the same amount.
func TestReadCPUSeesWork(t *testing.T) {
	before, err := ReadCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ru0 := rusageSelf()
	x := 0
	for rusageSelf()-ru0 < 200*time.Millisecond {
		for i := 0; i < 100000; i++ {
			x++
		}
	}
	after, err := ReadCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	want := rusageSelf() - ru0
	if d := after.Sub(before); d < want-30*time.Millisecond || d > want+want/5+30*time.Millisecond {
		t.Fatalf("getrusage saw %v of CPU; ReadCPU %v (before %+v after %+v, x=%d)", want, d, before, after, x)
	}
	if _, err := ReadCPU(1 << 30); err == nil {
		t.Fatal("ReadCPU of a pid that cannot exist: want an error")
	}
}

// gone reports whether pid no longer runs: it does not exist, or it is a
// zombie waiting for a parent (in a container, PID 1 may never reap it).
func gone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}

func TestGroupStopsWholeProcessGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	var g Group
	// The shell ignores SIGTERM and starts a grandchild that does too, so
	// only the group-wide SIGKILL after the grace period ends them.
	p, err := g.Start(Spec{Name: "stubborn", Path: "/bin/sh", Args: []string{"-c",
		`trap "" TERM; sh -c 'trap "" TERM; while :; do sleep 0.05; done' & echo $! > ` + pidFile + `; while :; do sleep 0.05; done`}})
	if err != nil {
		t.Fatal(err)
	}
	var child int
	for i := 0; i < 100 && child == 0; i++ {
		b, _ := os.ReadFile(pidFile)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(20 * time.Millisecond)
	}
	if child == 0 {
		t.Fatal("grandchild never wrote its pid")
	}
	start := time.Now()
	if err := g.StopAll(300 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "did not exit within 300ms of SIGTERM") {
		t.Fatalf("StopAll: %v; want the SIGKILL reported", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("StopAll took %v; want the grace period then SIGKILL", d)
	}
	if !gone(p.Pid()) {
		t.Errorf("leader %d survived", p.Pid())
	}
	// The grandchild is reparented to init on the leader's death; give init
	// a moment to reap it.
	for i := 0; i < 100 && !gone(child); i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if !gone(child) {
		t.Errorf("grandchild %d survived the group kill", child)
	}
	if err := g.StopAll(time.Second); err != nil {
		t.Errorf("second StopAll: %v", err)
	}
}

func TestStopReportsEarlyExit(t *testing.T) {
	p, err := Start(Spec{Name: "crasher", Path: "/bin/sh", Args: []string{"-c", "echo boom; exit 7"}})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	if err := p.Stop(time.Second); err == nil {
		t.Fatal("a process that exited 7 on its own: Stop should report it")
	}
	if !strings.Contains(p.Output(), "boom") {
		t.Fatalf("output %q lacks boom", p.Output())
	}
}

func TestRunKillsOnCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, Spec{Name: "sleeper", Path: "/bin/sh", Args: []string{"-c", "sleep 30 & sleep 30"}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Run returned after %v", d)
	}
	res, err := Run(context.Background(), Spec{Name: "echo", Path: "/bin/sh", Args: []string{"-c", "echo out; echo err >&2; exit 2"}})
	if err == nil || !strings.Contains(err.Error(), "err") || string(res.Stdout) != "out\n" {
		t.Fatalf("Run = %q, %v; want stdout out and an error quoting stderr", res.Stdout, err)
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{limit: 8}
	if _, err := b.Write([]byte("hello ")); err != nil {
		t.Fatal(err)
	}
	if b.String() != "hello " {
		t.Fatalf("got %q", b.String())
	}
	if _, err := b.Write([]byte("world!")); err != nil {
		t.Fatal(err)
	}
	if b.String() != "[...]o world!" {
		t.Fatalf("got %q; want the last 8 bytes marked as cut", b.String())
	}
}

func TestPinSelf(t *testing.T) {
	if ok, why := CanPin(); !ok {
		t.Skip("cannot pin here: " + why)
	}
	n0, _ := UsableCPUs()
	restore, err := PinSelf([]int{1})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := UsableCPUs(); n != 1 {
		t.Errorf("after PinSelf([1]): %d usable CPUs; want 1", n)
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if n, _ := UsableCPUs(); n != n0 {
		t.Errorf("after restore: %d usable CPUs; want %d", n, n0)
	}
}

func TestRelativePathWithDir(t *testing.T) {
	// "sub/tool" is relative to the test's directory, the child runs in
	// another one: Start must resolve the path before changing directory.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "tool"), []byte("#!/bin/sh\npwd\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	other := t.TempDir()
	res, err := Run(context.Background(), Spec{Name: "tool", Path: "sub/tool", Dir: other})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != other {
		t.Fatalf("child ran in %q; want %q", got, other)
	}
}

func TestParseVmRSS(t *testing.T) {
	got, err := parseVmRSS([]byte("Name:\tredis-server\nVmHWM:\t  9000 kB\nVmRSS:\t    8616 kB\nRssAnon:\t 1 kB\n"))
	if err != nil || got != 8616<<10 {
		t.Errorf("parseVmRSS = %d, %v; want %d", got, err, 8616<<10)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t12 MB\n", "VmRSS:\tx kB\n"} {
		if _, err := parseVmRSS([]byte(bad)); err == nil {
			t.Errorf("parseVmRSS(%q): want an error", bad)
		}
	}
	if rss, err := ReadRSS(os.Getpid()); err != nil || rss < 1<<20 {
		t.Errorf("ReadRSS(self) = %d, %v; want at least 1 MiB", rss, err)
	}
}

// lineRecorder records the lines written to it and the time it saw each.
type lineRecorder struct {
	mu    sync.Mutex
	buf   []byte
	lines []string
}

func (l *lineRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.lines = append(l.lines, string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}

func TestRunStdoutTeeAndOnStart(t *testing.T) {
	rec := &lineRecorder{}
	var pid int
	res, err := Run(context.Background(), Spec{
		Name: "sh", Path: "/bin/sh", Args: []string{"-c", "echo one; echo two; echo $$"},
		Stdout: rec, OnStart: func(p int) { pid = p },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.lines) != 3 || rec.lines[0] != "one" || rec.lines[1] != "two" {
		t.Fatalf("tee saw %q; want one, two, pid", rec.lines)
	}
	if rec.lines[2] != strconv.Itoa(pid) {
		t.Errorf("OnStart pid %d; the shell says it is %s", pid, rec.lines[2])
	}
	if string(res.Stdout) != "one\ntwo\n"+rec.lines[2]+"\n" {
		t.Errorf("RunResult.Stdout = %q", res.Stdout)
	}
}
