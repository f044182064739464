package profiles

import (
	"bytes"
	"io/fs"
	"sort"
	"strings"
	"testing"

	"github.com/svcdb/svcdb/core/config"
)

// TestEmbeddedPresetsLoad checks what cmd/svcdb will see: every embedded
// preset loads into a fresh registry and passes the cross-field rules, and
// Default is the generated default configuration.
func TestEmbeddedPresetsLoad(t *testing.T) {
	names, err := fs.Glob(FS, "*.toml")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	if got := strings.Join(names, " "); got != "benchmark.toml default.toml dev.toml production.toml" {
		t.Errorf("embedded presets: %s", got)
	}
	for _, n := range names {
		data, err := FS.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		r := config.New()
		if err := r.LoadTOML(n, data); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if errs := r.Validate(); len(errs) != 0 {
			t.Errorf("%s: %v", n, errs)
		}
	}
	fromFS, _ := FS.ReadFile("default.toml")
	if !bytes.Equal(Default, fromFS) {
		t.Error("Default differs from default.toml")
	}
	if string(Default) != config.New().GenerateTOML() {
		t.Error("default.toml is not GenerateTOML's output: go test ./core/config -run TestGeneratedFilesUpToDate -update")
	}
}
