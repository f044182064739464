package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/bench/harness"
	"github.com/svcdb/svcdb/bench/loadgen"
)

func TestParseLoads(t *testing.T) {
	got, err := parseLoads(nil)
	if err != nil || len(got) != 2 {
		t.Fatalf("default: %+v, %v; want two workloads", got, err)
	}
	for i, want := range []int{1, 16} {
		c := got[i]
		if c.TestTime != 3*time.Second || c.Clients != 50 || c.Threads != 1 || c.Ratio != (loadgen.Ratio{Set: 1, Get: 10}) ||
			c.DataSize != 32 || c.KeyMax != 10_000_000 || c.Pipeline != want {
			t.Errorf("default workload %d: %+v; want memtier's defaults on 50 connections for 3 s at pipeline %d", i+1, c, want)
		}
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
	// Only a workload naming its key range keeps it; the others take
	// compare's key space.
	_, given, err := parseLoadsKeys([]string{"--pipeline 16", "--key-maximum 99", "--key-minimum 5 --key-maximum 9"})
	if err != nil || !slices.Equal(given, []bool{false, true, true}) {
		t.Errorf("key ranges given: %v, %v; want [false true true]", given, err)
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
	f([]string{"compare", "--svcdb", "/bin/true", "--tests", "suite,lpushx", "--load", "none"}, 1, `test "lpushx"`)
	f([]string{"compare", "--svcdb", "/bin/true", "--min-ratio", "-1"}, 1, "min ratio -1")
	f([]string{"diag", "--tests", "suite"}, 1, "diag runs single tests")
	f([]string{"memory", "-h"}, 0, "-shapes")
	f([]string{"memory", "--svcdb", "/bin/true", "--shapes", "string,blob"}, 1, `shape "blob"`)
	f([]string{"memory", "--svcdb", "/nonexistent/svcdb"}, 1, "go build -o bin/svcdb ./cmd/svcdb")
	f([]string{"diag", "-h"}, 0, "-scrape-interval")
	f([]string{"diag", "--rounds", "x"}, 2, "invalid value")
	f([]string{"diag", "--svcdb", "/nonexistent/svcdb"}, 1, "go build -o bin/svcdb ./cmd/svcdb")
	f([]string{"diag", "--endpoints", "metrics"}, 1, "want a path such as /metrics")
	f([]string{"help"}, 0, "repl")
	f([]string{"repl", "-h"}, 0, "-sync-pairs")
	f([]string{"repl", "--sync-pairs", "svcdb>mysql"}, 1, "want master>replica")
	f([]string{"repl", "--replicas", "1,x"}, 1, `--replicas "1,x"`)
	f([]string{"repl", "--svcdb", "/nonexistent/svcdb"}, 1, "go build -o bin/svcdb ./cmd/svcdb")
	f([]string{"repl", "--svcdb", "/bin/true", "--replicas", "none", "--keys", "0"}, 1, "nothing to run")
	f([]string{"repl", "--svcdb", "/bin/true", "--replicas", "9"}, 1, "replicas 9")
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

func TestParseEndpoints(t *testing.T) {
	got, err := parseEndpoints(" /metrics, /status/json? ,,/debug/api/metrics?")
	want := []harness.Endpoint{{Path: "/metrics", Required: true}, {Path: "/status/json"}, {Path: "/debug/api/metrics"}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("parseEndpoints = %+v, %v; want %+v", got, err, want)
	}
	// The default flag value reads back as the defaults.
	if got, err := parseEndpoints(endpointList(harness.DefaultEndpoints)); err != nil || !slices.Equal(got, harness.DefaultEndpoints) {
		t.Errorf("round trip of the defaults: %+v, %v", got, err)
	}
	for _, bad := range []string{"", ",", "metrics", "/a?b", "/a b", "?"} {
		if _, err := parseEndpoints(bad); err == nil {
			t.Errorf("parseEndpoints(%q): want an error", bad)
		}
	}
}

func TestRedactFlag(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"--http-token", "s3cret", "--rounds", "5"}, []string{"--http-token", "REDACTED", "--rounds", "5"}},
		{[]string{"-http-token=s3cret"}, []string{"-http-token=REDACTED"}},
		{[]string{"--svcdb", "bin/svcdb", "--http-token"}, []string{"--svcdb", "bin/svcdb", "--http-token"}},
		{[]string{"--svcdb-args", "--http-token"}, []string{"--svcdb-args", "--http-token"}},
	} {
		if got := redactFlag(c.in, "http-token"); !slices.Equal(got, c.want) {
			t.Errorf("redactFlag(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestBenchFlagsApply(t *testing.T) {
	f := func(tests string, wantSuite bool, want ...string) {
		t.Helper()
		b := harness.Bench{}
		bf := &benchFlags{b: &b, tests: tests, pipelines: "1,16"}
		if err := bf.apply(); err != nil {
			t.Fatal(err)
		}
		if bf.suite != wantSuite || !slices.Equal(b.Tests, want) || !slices.Equal(b.Pipelines, []int{1, 16}) {
			t.Errorf("--tests %q: suite %v, tests %q, pipelines %v; want %v, %q", tests, bf.suite, b.Tests, b.Pipelines, wantSuite, want)
		}
	}
	f("suite", true)
	f("SUITE, lrange_600", true, "lrange_600")
	f("set,get", false, "set", "get")
	f("none", false)
	f("", false)
}
