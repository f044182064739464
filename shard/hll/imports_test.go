package hll

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLeaf: package hll imports no package of ours (see doc.go).
func TestLeaf(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/svcdb/svcdb/") && dep != "github.com/svcdb/svcdb/shard/hll" {
			t.Errorf("shard/hll depends on %s", dep)
		}
	}
}
