package harness_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/harness"
	"github.com/svcdb/svcdb/bench/internal/benchtest"
)

// moduleRoot is the repository root, two levels above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", dir, err)
	}
	return dir
}

// goBuild builds the module's package pkg ("./cmd/svcdb") into dir and
// returns the binary's path.
func goBuild(t *testing.T, pkg, dir string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(gobin, "build", "-o", out, pkg)
	cmd.Dir = moduleRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// svcbench runs the svcbench binary with args and returns its exit code,
// standard output and standard error.
func svcbench(t *testing.T, bin string, timeout time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("svcbench %s: no end within %v; stderr:\n%s", strings.Join(args, " "), timeout, stderr.String())
	}
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("svcbench %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

// svcbench persist --quick against the real svcdb (built here) and the
// real redis-server: it exits 0, and every row of both tables has numbers.
func TestPersistQuickAgainstSvcDB(t *testing.T) {
	redis := benchtest.NeedTool(t, "redis-server")
	bench := benchtest.NeedTool(t, "redis-benchmark")
	benchtest.NeedTool(t, "taskset")
	dir := t.TempDir()
	svcdb := goBuild(t, "./cmd/svcdb", dir)
	bin := goBuild(t, "./cmd/svcbench", dir)
	jsonFile, mdFile := filepath.Join(dir, "persist.json"), filepath.Join(dir, "persist.md")

	code, stdout, stderr := svcbench(t, bin, 5*time.Minute, "persist", "--quick", "--svcdb", svcdb, "--redis", redis,
		"--redis-benchmark", bench, "--max-others", "0", "--json", jsonFile, "--markdown", mdFile)
	if code != 0 {
		t.Fatalf("exit status %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	checkGone(t, stderr)
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	var rep harness.PersistReport
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}

	if len(rep.Modes) != 2 {
		t.Fatalf("%d appendfsync policies; want everysec and always", len(rep.Modes))
	}
	for _, m := range rep.Modes {
		if m.SvcDBAOFBytes <= 0 || m.RedisAOFBytes <= 0 || m.Failure != "" ||
			!strings.Contains(m.SvcDBCmd, "--appendfsync "+m.Fsync) || !strings.Contains(m.RedisCmd, "--appendfsync "+m.Fsync) {
			t.Errorf("policy %+v", m)
		}
	}
	var want []string
	for _, f := range []string{"everysec", "always"} {
		for _, c := range []string{"SET -P 1", "SET -P 16", "loadgen 1:1 R:R -P 1", "loadgen 1:1 R:R -P 16"} {
			want = append(want, f+" "+c)
		}
	}
	rows := rep.Throughput.Rows()
	if len(rows) != len(want) {
		t.Fatalf("%d throughput rows; want %d: %q", len(rows), len(want), want)
	}
	for i, r := range rows {
		if r.Case.Name != want[i] {
			t.Errorf("row %d is %q; want %q", i, r.Case.Name, want[i])
		}
		for _, s := range []harness.Sample{r.SvcDB, r.Redis} {
			if s.OpsPerSec <= 0 || s.P50Ms <= 0 || s.P99Ms <= 0 || s.CPUUsPerReq <= 0 || s.Requests == 0 {
				t.Errorf("%s: a number is not > 0: %+v", r.Case.Name, s)
			}
		}
		if r.OpsRatio <= 0 || r.Case.Failure != "" {
			t.Errorf("%s: ratio %v, failure %q", r.Case.Name, r.OpsRatio, r.Case.Failure)
		}
	}

	sn := rep.Snapshot
	if sn == nil || sn.Rate <= 0 || sn.Keys != 20000 {
		t.Fatalf("snapshot part %+v", sn)
	}
	for _, side := range []struct {
		name string
		s    harness.SnapshotSide
	}{{"svcdb", sn.SvcDB}, {"redis", sn.Redis}} {
		if side.s.Failure != "" || len(side.s.Runs) != 1 || side.s.FillSec <= 0 || side.s.MaxOpsPerSec <= 0 {
			t.Fatalf("%s: %+v", side.name, side.s)
		}
		r := side.s.Runs[0]
		if r.BGSaveSec <= 0 || r.RDBBytes <= 0 || len(r.Seconds) < 3 {
			t.Errorf("%s: BGSAVE %v s, %d bytes, %d seconds", side.name, r.BGSaveSec, r.RDBBytes, len(r.Seconds))
		}
		for _, l := range []harness.LatencyStats{r.Baseline, r.During} {
			if l.Requests == 0 || l.P50Ms <= 0 || l.P99Ms <= 0 || l.P999Ms <= 0 || l.MaxMs <= 0 {
				t.Errorf("%s: a latency is not > 0: %+v", side.name, l)
			}
		}
		// 2 s of baseline at the fixed rate, every request due sent.
		if want := uint64(2 * sn.Rate); r.Baseline.Requests < want*99/100 || r.Baseline.Requests > want*101/100 {
			t.Errorf("%s: %d baseline requests; want %d", side.name, r.Baseline.Requests, want)
		}
	}

	md, err := os.ReadFile(mdFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		// A client-bound row's name ends in " *".
		inMD := strings.Contains(string(md), "| "+w+" | ") || strings.Contains(string(md), "| "+w+" * | ")
		inTable := strings.Contains(stdout, w+"  ") || strings.Contains(stdout, w+" *  ")
		if !inMD || !inTable {
			t.Errorf("the Markdown (%v) or the table (%v) lacks the row %q", inMD, inTable, w)
		}
	}
	for _, w := range []string{"### Latency during a snapshot", "| svcdb | ", "| redis | "} {
		if !strings.Contains(string(md), w) {
			t.Errorf("the Markdown lacks %q", w)
		}
	}
	t.Logf("\n%s", stdout)
}

// A run that fails gives a non-zero exit status, and only then: here
// redis-server plays svcdb through a wrapper that drops the append-only
// file, which the report must catch.
func TestPersistFailureExitStatus(t *testing.T) {
	redis := benchtest.NeedTool(t, "redis-server")
	benchtest.NeedTool(t, "taskset")
	dir := t.TempDir()
	bin := goBuild(t, "./cmd/svcbench", dir)
	// svcdb's flags in, redis-server's out; appendonly forced to "no"
	// unless KEEP_AOF is set.
	wrapper := filepath.Join(dir, "fake-svcdb")
	script := fmt.Sprintf(`#!/bin/sh
set -- "$@" --end
while [ "$1" != --end ]; do
	case "$1" in
	--data-dir) set -- "$@" --dir "$2"; shift 2 ;;
	--appendonly) if [ -n "$KEEP_AOF" ]; then set -- "$@" --appendonly "$2"; else set -- "$@" --appendonly no; fi; shift 2 ;;
	*) set -- "$@" "$1"; shift ;;
	esac
done
shift
exec %q "$@"
`, redis)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"persist", "--svcdb", wrapper, "--redis", redis, "--rounds", "1", "--tests", "none",
		"--load", "--ratio 1:1 --test-time 0.2 -c 4", "--appendfsync", "everysec", "--keys", "0", "--max-others", "0"}

	code, stdout, stderr := svcbench(t, bin, 2*time.Minute, args...)
	if code != 1 || !strings.Contains(stderr, "svcdb wrote no append-only file") || !strings.Contains(stdout, "FAILED appendfsync everysec") {
		t.Errorf("exit status %d; want 1 with the missing file named; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	checkGone(t, stderr)

	t.Setenv("KEEP_AOF", "1")
	if code, stdout, stderr := svcbench(t, bin, 2*time.Minute, args...); code != 0 {
		t.Errorf("with the append-only file: exit status %d; want 0; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
