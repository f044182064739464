package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/loadgen"
)

func TestParseLoads(t *testing.T) {
	got, err := parseLoads(nil)
	if err != nil || len(got) != 1 || got[0].TestTime != 3*time.Second || got[0].Clients != 50 {
		t.Fatalf("default: %+v, %v; want one memtier-default 3 s workload", got, err)
	}
	got, err = parseLoads([]string{"none"})
	if err != nil || len(got) != 0 {
		t.Fatalf("none: %+v, %v; want no workloads", got, err)
	}
	got, err = parseLoads([]string{
		"--ratio 1:1 --key-pattern S:G --pipeline 16 -c 10 -t 2 --test-time 1.5",
		"-n 500 --key-prefix 'k '",
	})
	if err != nil || len(got) != 2 {
		t.Fatalf("two workloads: %+v, %v", got, err)
	}
	a, b := got[0], got[1]
	if a.Ratio != (loadgen.Ratio{Set: 1, Get: 1}) || a.SetPattern != loadgen.Sequential || a.GetPattern != loadgen.Gaussian ||
		a.Pipeline != 16 || a.Clients != 10 || a.Threads != 2 || a.TestTime != 1500*time.Millisecond {
		t.Errorf("first workload parsed as %+v", a)
	}
	// --requests without --test-time makes the workload request-bound.
	if b.Requests != 500 || b.TestTime != 0 || b.KeyPrefix != "k " {
		t.Errorf("second workload parsed as %+v", b)
	}
	for _, bad := range []string{"--ratio 0:0", "--pipeline x", "--nope", "'unterminated", "extra-arg"} {
		if _, err := parseLoads([]string{bad}); err == nil {
			t.Errorf("--load %q: want an error", bad)
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	f := func(args []string, want int, wantOut string) {
		t.Helper()
		var out, errb bytes.Buffer
		if got := run(args, &out, &errb); got != want {
			t.Errorf("run(%q) = %d; want %d (stderr: %s)", args, got, want, errb.String())
		}
		if !strings.Contains(out.String()+errb.String(), wantOut) {
			t.Errorf("run(%q) output lacks %q:\n%s%s", args, wantOut, out.String(), errb.String())
		}
	}
	f(nil, 2, "usage: svcbench")
	f([]string{"bogus"}, 2, `unknown command "bogus"`)
	f([]string{"help"}, 0, "compare")
	f([]string{"compare", "-h"}, 0, "-svcdb-args")
	f([]string{"compare", "--rounds", "x"}, 2, "invalid value")
	f([]string{"compare", "--svcdb", "/nonexistent/svcdb"}, 1, "go build -o bin/svcdb ./cmd/svcdb")
	f([]string{"compare", "--svcdb-args", "'open"}, 1, "unterminated")
	f([]string{"load", "--ratio", "1"}, 2, "want SET:GET")
	f([]string{"load", "-p", "1", "-n", "1", "-c", "1", "-t", "1"}, 1, "connection refused")
}

func TestSecondsFlag(t *testing.T) {
	var d secondsFlag
	for in, want := range map[string]time.Duration{"3": 3 * time.Second, "0.25": 250 * time.Millisecond, "1500ms": 1500 * time.Millisecond} {
		if err := d.Set(in); err != nil || time.Duration(d) != want {
			t.Errorf("Set(%q) = %v, %v; want %v", in, time.Duration(d), err, want)
		}
	}
	for _, bad := range []string{"-1", "abc", "NaN"} {
		if err := d.Set(bad); err == nil {
			t.Errorf("Set(%q): want an error", bad)
		}
	}
}
