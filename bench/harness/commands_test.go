package harness_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/bench/harness"
)

// TestCommandCasesRedisWithItself: the bitmap, HLL and geo cases send their
// setup to both servers, run at each pipeline depth with a ratio and are
// held to the bar; a command that replies an error fails its case (the
// comparison goes on).
func TestCommandCasesRedisWithItself(t *testing.T) {
	cfg, progress := tinyConfig(t)
	cfg.Tests, cfg.Loads = nil, nil
	cfg.MinRatio = 0 // redis against itself on a shared machine: failures only
	cfg.Commands = append(slices.Clone(harness.DefaultCommands),
		harness.CommandCase{Name: "SETBIT ERR", Command: []string{"SETBIT", "bm:__rand_int__", "-1", "1"}})
	rep, err := harness.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress)
	}
	checkGone(t, progress.String())
	var names []string
	for _, c := range rep.Cases {
		names = append(names, c.Name)
		switch {
		case strings.HasPrefix(c.Name, "SETBIT ERR"):
			if !strings.Contains(c.Failure, "bit offset is not an integer or out of range") {
				t.Errorf("%s: failure %q, want the server's error", c.Name, c.Failure)
			}
		case c.Failure != "" || !c.Gated || len(c.SvcDB) != 1 || len(c.Redis) != 1:
			t.Errorf("%s: failure %q gated %v samples %d/%d", c.Name, c.Failure, c.Gated, len(c.SvcDB), len(c.Redis))
		case !strings.Contains(c.Detail, " -P "):
			t.Errorf("%s: detail %q lacks redis-benchmark's arguments", c.Name, c.Detail)
		}
	}
	var want []string
	for _, n := range []string{"SETBIT", "BITCOUNT", "PFADD", "PFCOUNT", "GEOSEARCH", "SETBIT ERR"} {
		want = append(want, n+" -P 1", n+" -P 16")
	}
	if !slices.Equal(names, want) {
		t.Fatalf("cases %q, want %q", names, want)
	}
	for _, r := range rep.Rows() {
		if r.Case.Failure == "" && (r.OpsRatio <= 0 || r.SvcDB.OpsPerSec <= 0) {
			t.Errorf("%s: ratio %v, svcdb %+v", r.Case.Name, r.OpsRatio, r.SvcDB)
		}
	}
	for _, name := range []string{"GEOSEARCH -P 1", "PFCOUNT -P 16"} {
		i := slices.Index(names, name)
		if d := rep.Cases[i].Detail; !strings.Contains(d, "(setup: DEL ") {
			t.Errorf("%s: detail %q lacks the setup", name, d)
		}
	}
	if p := rep.Problems(); len(p) != 2 || !strings.Contains(p[0], "SETBIT ERR -P 1: FAILED") {
		t.Errorf("problems %q, want the two SETBIT ERR cases only", p)
	}
}

// TestCommandCasesSetupFails: a setup command a server refuses ends the
// comparison with an error naming the case and the server.
func TestCommandCasesSetupFails(t *testing.T) {
	cfg, progress := tinyConfig(t)
	cfg.Tests, cfg.Loads = nil, nil
	cfg.Commands = []harness.CommandCase{{Name: "BAD", Setup: [][]string{{"GEOADD", "g", "200", "100", "m"}}, Command: []string{"PING"}}}
	_, err := harness.Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "BAD: setup on svcdb") || !strings.Contains(err.Error(), "invalid longitude,latitude pair") {
		t.Fatalf("error %v, want the setup's failure\nprogress:\n%s", err, progress)
	}
	checkGone(t, progress.String())
}

// TestDefaultCommandsFixtures: the geo set and the HLL the cases read are
// what their doc comments say, and the cases pass Validate.
func TestDefaultCommandsFixtures(t *testing.T) {
	geo := harness.GeoSetup()
	if len(geo) != 2+3*1000 || geo[0] != "GEOADD" || geo[1] != harness.GeoKey {
		t.Fatalf("GeoSetup: %d words starting %q", len(geo), geo[:min(len(geo), 5)])
	}
	names := map[string]bool{}
	for i := 2; i < len(geo); i += 3 {
		lon, err1 := strconv.ParseFloat(geo[i], 64)
		lat, err2 := strconv.ParseFloat(geo[i+1], 64)
		if err1 != nil || err2 != nil || lon < 8 || lon > 19 || lat < 34 || lat > 42 {
			t.Errorf("place %s at %s,%s: outside lon 8..19, lat 34..42", geo[i+2], geo[i], geo[i+1])
		}
		names[geo[i+2]] = true
	}
	if len(names) != 1000 {
		t.Errorf("%d distinct place names, want 1000", len(names))
	}
	hll := harness.HLLSetup()
	elems := map[string]bool{}
	for _, cmd := range hll[1:] {
		if cmd[0] != "PFADD" || len(cmd) > 1002 {
			t.Fatalf("HLL setup command %q... of %d words", cmd[:2], len(cmd))
		}
		for _, e := range cmd[2:] {
			elems[e] = true
		}
	}
	if hll[0][0] != "DEL" || len(elems) != 20_000 {
		t.Errorf("HLL setup: first %q, %d distinct elements, want DEL and 20000", hll[0], len(elems))
	}

	cfg := harness.DefaultConfig()
	cfg.SvcDB.Path, cfg.Redis.Path = "/bin/true", "/bin/true"
	cfg.Tests, cfg.Suite, cfg.Loads = nil, nil, nil
	cfg.Commands = harness.DefaultCommands
	if err := cfg.Validate(); err != nil {
		t.Errorf("DefaultCommands: %v", err)
	}
	cfg.Commands = []harness.CommandCase{{Name: "EMPTY"}, {Name: "HOLE", Setup: [][]string{nil}, Command: []string{"PING"}}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `"EMPTY"`) || !strings.Contains(err.Error(), `"HOLE"`) {
		t.Errorf("Validate of empty cases: %v", err)
	}
}
