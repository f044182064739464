package harness

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseModes(t *testing.T) {
	got, err := ParseModes("pinned, defaults", []int{100000, 0})
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, m := range got {
		labels = append(labels, m.Label())
	}
	want := "pinned, -r 100000|pinned, one key|defaults, -r 100000|defaults, one key"
	if strings.Join(labels, "|") != want {
		t.Errorf("labels %q; want %q", strings.Join(labels, "|"), want)
	}
	if c := got[3].Apply(DefaultConfig()); c.Pin || c.KeySpace != 0 {
		t.Errorf("defaults, one key applied: pin %v, keyspace %d", c.Pin, c.KeySpace)
	}
	for _, bad := range []struct {
		modes string
		ks    []int
		want  string
	}{{"pinned,taskset", []int{1}, `mode "taskset"`}, {"pinned", []int{-1}, "key space -1"}, {"", []int{1}, "no combination"}} {
		if _, err := ParseModes(bad.modes, bad.ks); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("ParseModes(%q, %v): %v; want an error mentioning %q", bad.modes, bad.ks, err, bad.want)
		}
	}
}

func TestSideBySide(t *testing.T) {
	set := func(svc, redis float64) *Case {
		return &Case{Name: "SET -P 16", Tool: "redis-benchmark", Gated: true,
			SvcDB: []Sample{{OpsPerSec: svc, CPUUsPerReq: 1}}, Redis: []Sample{{OpsPerSec: redis, CPUUsPerReq: 2}}}
	}
	pinned := &Report{MinRatio: 1, Cases: []*Case{set(120, 100)}}
	defaults := &Report{MinRatio: 1, Cases: []*Case{
		set(70, 100),
		{Name: "HSET -P 16", Tool: "redis-benchmark", Gated: true, Failure: "svcdb: Error from server: ERR x"},
	}}
	vs := []Variant{{Mode: Mode{Pin: true, KeySpace: 100000}, Report: pinned}, {Mode: Mode{KeySpace: 0}, Report: defaults}}
	var tb, md bytes.Buffer
	if err := WriteSideBySide(&tb, vs); err != nil {
		t.Fatal(err)
	}
	out := tb.String()
	for _, want := range []string{"pinned, -r 100000 ops ratio", "defaults, one key ops ratio", "1.20", "0.70", "0.50", "LOW", "FAILED", "bar, all modes: 1 of 3 cases pass"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// HSET ran in the defaults mode only: the pinned columns say so.
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "HSET") && !strings.HasPrefix(strings.Join(strings.Fields(line), " "), "HSET -P 16 - - - - ") {
			t.Errorf("HSET row should have no pinned numbers: %q", line)
		}
	}
	if err := WriteSideBySideMarkdown(&md, vs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| case | pinned, -r 100000 ops ratio |", "|---|--:|", "| SET -P 16 | 1.20 | - | 0.50 | ok | 0.70 | - | 0.50 | LOW |", "| HSET -P 16 | - | - | - | - | - | - | - | FAILED |", "1 of 3 cases pass"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// TestBenchArgsKeySpace: -r N for a key space, no -r at all for 0 (one
// key), in both the -t form and the command-line form.
func TestBenchArgsKeySpace(t *testing.T) {
	has := func(args []string) bool { return strings.Contains(" "+strings.Join(args, " ")+" ", " -r ") }
	if a := benchArgs(1, 50, 100, 100000, "set", 16); !has(a) || !strings.Contains(strings.Join(a, " "), "-r 100000 -t set -P 16") {
		t.Errorf("keyspace 100000: %q", a)
	}
	if a := benchArgs(1, 50, 100, 0, "set", 16); has(a) || !strings.Contains(strings.Join(a, " "), "-n 100 -t set -P 16 --csv -q") {
		t.Errorf("keyspace 0: %q", a)
	}
	w := benchWork{command: []string{"EVALSHA", "abc", "1", "key:__rand_int__"}}
	if a := w.args(1, 50, 100, 0, 16); has(a) || strings.Join(a[len(a)-4:], " ") != "EVALSHA abc 1 key:__rand_int__" {
		t.Errorf("command, keyspace 0: %q", a)
	}
	if a := w.args(1, 50, 100, 7, 16); !has(a) || !strings.Contains(strings.Join(a, " "), "-r 7 -P 16 --csv -q EVALSHA") {
		t.Errorf("command, keyspace 7: %q", a)
	}
}
