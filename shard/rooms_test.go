package shard

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// runtimeFiles are the runtime's files of this package (doc.go, "Two rooms
// in one package"); every other non-test file is the keyspace's.
var runtimeFiles = map[string]bool{
	"admission.go":        true,
	"batch.go":            true,
	"hotshards.go":        true,
	"inspect.go":          true,
	"localroute.go":       true,
	"queue.go":            true,
	"rdbload.go":          true,
	"replay.go":           true,
	"replica.go":          true,
	"runtime.go":          true,
	"runtime_keyspace.go": true,
	"shard.go":            true,
	"snapshot_driver.go":  true,
	"txn.go":              true,
}

// TestRoomsBoundary type-checks the package and fails when a keyspace file
// uses anything the runtime declares (the keyspace must not import the
// runtime once it is a package of its own), or a runtime file uses an
// unexported name the keyspace declares (the runtime must reach stores and
// contexts only through their exported methods). It is the import-graph rule
// "keyspace does not import shard" while both still share one package.
func TestRoomsBoundary(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the rooms test needs the go command: %v", err)
	}
	// Export data of every dependency, for the type checker's importer.
	out, err := exec.Command(goBin, "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -export: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	for name := range runtimeFiles {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("runtimeFiles names %s, which is gone: keep the list current", name)
		}
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: imp}).Check(module+"/shard", fset, files, info)
	if err != nil {
		t.Fatalf("type-checking the package: %v", err)
	}
	var bad []string
	crossings := 0
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg {
			continue
		}
		if _, ok := obj.(*types.PkgName); ok {
			continue
		}
		use := filepath.Base(fset.Position(id.Pos()).Filename)
		decl := filepath.Base(fset.Position(obj.Pos()).Filename)
		useRT, declRT := runtimeFiles[use], runtimeFiles[decl]
		switch {
		case !useRT && declRT:
			bad = append(bad, fset.Position(id.Pos()).String()+": the keyspace uses the runtime's "+obj.Name()+" ("+decl+")")
		case useRT && !declRT:
			crossings++
			if !obj.Exported() {
				bad = append(bad, fset.Position(id.Pos()).String()+": the runtime uses the keyspace's unexported "+obj.Name()+" ("+decl+")")
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
	// The check itself must be able to fail: the runtime does use keyspace
	// names (Ctx, Store, Env ...), so uses across the line are seen.
	if crossings == 0 {
		t.Error("no runtime file uses a keyspace name: the classification is broken")
	}
}

const module = "github.com/svcdb/svcdb"
