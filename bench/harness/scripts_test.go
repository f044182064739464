package harness_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/bench/harness"
)

// TestScriptCasesRedisWithItself: the EVALSHA cases load their script on
// both servers, run at each pipeline depth with a ratio, and are not held
// to the bar; a script that replies an error fails its case (the
// comparison goes on).
func TestScriptCasesRedisWithItself(t *testing.T) {
	cfg, progress := tinyConfig(t)
	cfg.Tests, cfg.Loads = nil, nil
	cfg.Scripts = append(slices.Clone(harness.DefaultScripts),
		harness.ScriptCase{Name: "EVALSHA ERR", Body: "return redis.error_reply('ERR boom')", Args: []string{"0"}})
	rep, err := harness.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress)
	}
	checkGone(t, progress.String())
	var names []string
	for _, c := range rep.Cases {
		names = append(names, c.Name)
		switch {
		case strings.HasPrefix(c.Name, "EVALSHA ERR"):
			if !strings.Contains(c.Failure, "boom") {
				t.Errorf("%s: failure %q, want the script's error", c.Name, c.Failure)
			}
		case c.Failure != "" || c.Gated || len(c.SvcDB) != 1 || len(c.Redis) != 1:
			t.Errorf("%s: failure %q gated %v samples %d/%d", c.Name, c.Failure, c.Gated, len(c.SvcDB), len(c.Redis))
		case !strings.Contains(c.Detail, "EVALSHA ") || !strings.Contains(c.Detail, "redis.call"):
			t.Errorf("%s: detail %q lacks the command and the script", c.Name, c.Detail)
		}
	}
	want := []string{"EVALSHA GET -P 1", "EVALSHA GET -P 16", "EVALSHA INCR+EXPIRE -P 1", "EVALSHA INCR+EXPIRE -P 16", "EVALSHA ERR -P 1", "EVALSHA ERR -P 16"}
	if !slices.Equal(names, want) {
		t.Fatalf("cases %q, want %q", names, want)
	}
	for _, r := range rep.Rows() {
		if r.Case.Failure == "" && (r.OpsRatio <= 0 || r.SvcDB.OpsPerSec <= 0) {
			t.Errorf("%s: ratio %v, svcdb %+v", r.Case.Name, r.OpsRatio, r.SvcDB)
		}
	}
}
