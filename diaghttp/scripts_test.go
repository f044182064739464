package diaghttp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/scripting"
)

func (s *source) SlowScripts(n int) []scripting.RunStat { return s.srv.SlowScripts(n) }

// TestScriptMetricsAndAPI: svc_scripts_* count script runs by kind and
// their failures (promtool accepts the exposition), and
// /debug/api/scripts lists the scripts and functions that ran, slowest
// run first.
func TestScriptMetricsAndAPI(t *testing.T) {
	f := start(t, apiToken)
	_, m := f.scrape(t)
	for _, k := range []string{`svc_scripts_executions_total{kind="eval"}`, `svc_scripts_executions_total{kind="function"}`,
		`svc_scripts_failed_total{kind="eval"}`, `svc_scripts_failed_total{kind="function"}`, "svc_scripts_killed_total"} {
		if v, ok := m[k]; !ok || v != 0 {
			t.Errorf("first scrape: %s = %v (present %v), want 0", k, v, ok)
		}
	}
	c := dialRedis(t, f.redis)
	for _, cmd := range [][]string{
		{"EVAL", "return 1", "0"},
		{"EVAL", "local i = 0 while i < 200000 do i = i + 1 end return i", "0"},
		{"EVAL", "error('boom')", "0"},
		{"FUNCTION", "LOAD", "#!lua name=mlib\nredis.register_function('mf', function() return redis.call('ping') end)"},
		{"FCALL", "mf", "0"},
	} {
		if r := c.do(t, cmd...); strings.HasPrefix(r, "$") {
			c.line(t) // a bulk reply's payload
		}
	}
	text, m := f.scrape(t)
	checkMetrics(t, text)
	for k, want := range map[string]float64{
		`svc_scripts_executions_total{kind="eval"}`: 3, `svc_scripts_executions_total{kind="function"}`: 1,
		`svc_scripts_failed_total{kind="eval"}`: 1, `svc_scripts_failed_total{kind="function"}`: 0,
		"svc_scripts_killed_total": 0,
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	if !strings.Contains(text, "# TYPE svc_scripts_executions_total counter\n") {
		t.Error("svc_scripts_executions_total is not a counter")
	}

	r := f.do(t, "GET", "/debug/api/scripts", apiAuth)
	if r.code != 200 {
		t.Fatalf("/debug/api/scripts: %d %s", r.code, r.body)
	}
	var doc struct {
		Scripts []struct {
			Kind, Name, Library, Source string
			Calls, Failed               int64
			MaxUS                       int64                `json:"max_us"`
			MeanUS                      int64                `json:"mean_us"`
			TotalUS                     int64                `json:"total_us"`
			LastRun                     struct{ Unix int64 } `json:"last_run"`
		}
	}
	if err := json.Unmarshal([]byte(r.body), &doc); err != nil {
		t.Fatalf("%v: %s", err, r.body)
	}
	if len(doc.Scripts) != 4 {
		t.Fatalf("%d scripts listed, want 4: %s", len(doc.Scripts), r.body)
	}
	if s := doc.Scripts[0]; s.Kind != "eval" || !strings.Contains(s.Source, "200000") || s.MaxUS <= 0 || s.LastRun.Unix <= 0 || len(s.Name) != 40 {
		t.Errorf("slowest: %+v", s)
	}
	found := false
	for _, s := range doc.Scripts {
		if s.Kind == "function" {
			found = s.Name == "mf" && s.Library == "mlib" && s.Calls == 1
		}
	}
	if !found {
		t.Errorf("the function is not listed: %s", r.body)
	}
	if r := f.do(t, "GET", "/debug/api/scripts", nil); r.code != 401 {
		t.Errorf("/debug/api/scripts without the token: %d", r.code)
	}
}
