package config

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md and profiles/default.toml from the registry")

// generated are the files rendered from the registry.
var generated = []struct {
	path   string
	render func(*Registry) string
}{
	{"../../docs/configuration.md", (*Registry).Markdown},
	{"../../profiles/default.toml", (*Registry).GenerateTOML},
}

// TestGeneratedFilesUpToDate fails when docs/configuration.md or
// profiles/default.toml drift from the registry; run
// go test ./core/config -run TestGeneratedFilesUpToDate -update to refresh them.
func TestGeneratedFilesUpToDate(t *testing.T) {
	for _, g := range generated {
		want := g.render(New())
		if *update {
			if err := os.WriteFile(g.path, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(g.path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if string(got) != want {
			t.Errorf("%s is out of date with core/config: run go test ./core/config -run TestGeneratedFilesUpToDate -update", g.path)
		}
	}
}

func TestDocsListEveryParameter(t *testing.T) {
	r := New()
	md := r.Markdown()
	for _, p := range r.Params() {
		row := "| `" + p.Key + "` |"
		sec := "### [" + p.Table + "]"
		i := strings.Index(md, sec)
		if i < 0 {
			t.Fatalf("no section %s", sec)
		}
		rest := md[i+len(sec):]
		if j := strings.Index(rest, "\n### "); j >= 0 {
			rest = rest[:j]
		}
		if !strings.Contains(rest, row) || !strings.Contains(rest, "`"+p.Name+"`") || !strings.Contains(rest, p.EnvName) {
			t.Errorf("%s: not listed under %s with its names", p.Name, sec)
		}
	}
}

func TestGenerateTOMLLoadsBackAsDefaults(t *testing.T) {
	r := New()
	text := r.GenerateTOML()
	if err := r.LoadTOML("generated.toml", []byte(text)); err != nil {
		t.Fatal(err)
	}
	if errs := r.Validate(); len(errs) != 0 {
		t.Fatal(errs)
	}
	for _, p := range r.Params() {
		v, src := r.Value(p.Name)
		if v != p.Default || src != SourceFile {
			t.Errorf("%s = %q from %v, want the default %q from the file", p.Name, v, src, p.Default)
		}
		if !strings.Contains(text, "\n"+p.Key+" = ") || !strings.Contains(text, "# "+p.Doc+".\n") {
			t.Errorf("%s: key or comment missing", p.Name)
		}
	}
	for _, td := range tableDocs {
		if !strings.Contains(text, "\n["+td.name+"]\n") {
			t.Errorf("table [%s] missing", td.name)
		}
	}
}

// TestProfiles loads every file in profiles/ and checks what makes each
// preset what it is.
func TestProfiles(t *testing.T) {
	files, err := filepath.Glob("../../profiles/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "benchmark.toml default.toml dev.toml production.toml" {
		t.Errorf("profiles: %v (a new preset needs its checks here)", names)
	}
	distinctive := map[string]map[string]string{
		"default.toml": {"port": "6379", "loglevel": "info", "http-enabled": "no"},
		"dev.toml": {"loglevel": "debug", "logging-output": "stderr", "http-enabled": "yes", "shards": "4",
			"slowlog-log-slower-than": "1000", "debug-bundle-ttl": "2h", "latency-monitor-threshold": "10",
			"enable-debug-command": "local"},
		"production.toml": {"bind": "0.0.0.0", "maxmemory": "8589934592", "maxmemory-policy": "allkeys-lru",
			"logging-format": "json", "logging-file-path": "/var/log/svcdb/svcdb.log", "logging-rotation-max-files": "14",
			"tracing-enabled": "yes", "tracing-sampling-rate": "0.05", "timeout": "300", "requirepass": "", "http-token": "", "latency-monitor-threshold": "100",
			"save": "3600 1 300 100 60 10000", "appendonly": "yes", "appendfsync": "everysec"},
		"benchmark.toml": {"slowlog-log-slower-than": "-1", "hotshards-enabled": "no", "loglevel": "warn",
			"logging-per-request-spans": "no", "tracing-enabled": "no", "maxclients": "50000"},
	}
	for _, f := range files {
		base := filepath.Base(f)
		t.Run(base, func(t *testing.T) {
			r := New()
			if err := r.LoadFile(f); err != nil {
				t.Fatal(err)
			}
			if errs := r.Validate(); len(errs) != 0 {
				t.Fatal(errs)
			}
			for name, want := range distinctive[base] {
				if v, _ := r.Value(name); v != want {
					t.Errorf("%s = %q, want %q", name, v, want)
				}
			}
		})
	}
}
