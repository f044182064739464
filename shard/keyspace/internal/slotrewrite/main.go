// Command slotrewrite rewrites uses of keyspace.Object's former value
// fields (Str, Coll, IntVal) into the accessors that replaced them when the
// slot shrank to 48 bytes (issue 20, part 1; db.go, "the value words"):
//
//	o.Str             → o.Bytes()        o.Str = e     → o.SetBytes(e)
//	o.Coll            → o.Coll()         o.Coll = e    → o.SetColl(e)
//	o.IntVal          → o.Int()          o.IntVal = e  → o.SetInt(e)
//
// A tuple assignment whose left side names one of the fields becomes one
// statement per target, in order, when no right-hand side reads one of the
// fields (Go evaluates every right side before assigning; the sequence
// would not): `o.Str, o.Coll, o.Enc = nil, t, EncHashtable` becomes
// `o.SetBytes(nil); o.SetColl(t); o.Enc = EncHashtable`. The setters are
// written so that this sequence means what the fields meant: setting nil
// clears the words only when they hold that kind (db.go). Everything the
// tool cannot rewrite safely (a tuple reading the fields, &o.Str, o.IntVal++,
// an Object literal naming the fields) is printed as "MANUAL file:line" and
// left alone.
//
// It works on types, not text: only selectors whose receiver is a
// keyspace.Object are touched (an rdb.Entry's Str is not). It must run on
// the tree before the fields are removed (the type checker needs them), from
// the module root:
//
//	go run ./shard/keyspace/internal/slotrewrite ./shard/... && gofmt -w shard
//
// It is kept for the merge: a branch written against the old fields is
// rewritten by running it there, before merging.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
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
)

const objectPkg = "github.com/svcdb/svcdb/shard/keyspace"

type listedPackage struct {
	ImportPath   string
	Dir          string
	Name         string
	Export       string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	ImportMap    map[string]string
	DepOnly      bool
}

func main() {
	patterns := os.Args[1:]
	if len(patterns) == 0 {
		patterns = []string{"./shard/..."}
	}
	args := append([]string{"list", "-e", "-export", "-deps", "-test", "-json"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		fail("go list: %v", err)
	}
	var all []*listedPackage
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		p := new(listedPackage)
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			fail("go list output: %v", err)
		}
		all = append(all, p)
	}
	export := map[string]string{}
	hasTestVariant := map[string]bool{}
	for _, p := range all {
		export[p.ImportPath] = p.Export
		if base, variant, ok := strings.Cut(p.ImportPath, " ["); ok && variant == base+".test]" {
			hasTestVariant[base] = true
		}
	}
	fset := token.NewFileSet()
	edits := map[string][]edit{} // by file
	seen := map[string]bool{}    // file:offset of an edit already made
	for _, p := range all {
		if p.DepOnly || strings.HasSuffix(p.ImportPath, ".test") || hasTestVariant[p.ImportPath] {
			continue
		}
		var names []string
		if strings.Contains(p.ImportPath, " [") && !strings.HasSuffix(p.Name, "_test") {
			names = append(append(names, p.GoFiles...), p.TestGoFiles...)
		} else {
			names = p.GoFiles // a package without tests, or an external test package
		}
		var files []*ast.File
		for _, n := range names {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, n), nil, parser.ParseComments)
			if err != nil {
				fail("%v", err)
			}
			files = append(files, f)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
		conf := types.Config{
			Importer: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
				if m, ok := p.ImportMap[path]; ok {
					path = m
				}
				if export[path] == "" {
					return nil, fmt.Errorf("no export data for %s", path)
				}
				return os.Open(export[path])
			}),
			Error: func(error) {}, // keep going: selections are recorded where they resolve
		}
		path, _, _ := strings.Cut(p.ImportPath, " [") // a test variant's types have the package's path
		conf.Check(path, fset, files, info)
		for _, f := range files {
			name := fset.Position(f.Pos()).Filename
			src, err := os.ReadFile(name)
			if err != nil {
				fail("%v", err)
			}
			for _, e := range rewriteFile(fset, f, info, src) {
				key := fmt.Sprintf("%s:%d", name, e.from)
				if !seen[key] {
					seen[key] = true
					edits[name] = append(edits[name], e)
				}
			}
		}
	}
	for name, es := range edits {
		src, err := os.ReadFile(name)
		if err != nil {
			fail("%v", err)
		}
		if err := os.WriteFile(name, apply(src, es), 0o644); err != nil {
			fail("%v", err)
		}
		fmt.Printf("rewrote %s (%d edits)\n", name, len(es))
	}
}

// edit replaces src[from:to] with text.
type edit struct {
	from, to int
	text     string
}

// apply applies non-overlapping edits to src.
func apply(src []byte, es []edit) []byte {
	sort.Slice(es, func(i, j int) bool { return es[i].from < es[j].from })
	var b bytes.Buffer
	at := 0
	for _, e := range es {
		if e.from < at {
			fail("overlapping edits at offset %d", e.from)
		}
		b.Write(src[at:e.from])
		b.WriteString(e.text)
		at = e.to
	}
	b.Write(src[at:])
	return b.Bytes()
}

var getter = map[string]string{"Str": "Bytes()", "Coll": "Coll()", "IntVal": "Int()"}
var setter = map[string]string{"Str": "SetBytes", "Coll": "SetColl", "IntVal": "SetInt"}

// isObjectField reports whether sel is X.Str, X.Coll or X.IntVal on a
// keyspace.Object.
func isObjectField(info *types.Info, sel *ast.SelectorExpr) bool {
	if _, ok := getter[sel.Sel.Name]; !ok {
		return false
	}
	s, ok := info.Selections[sel]
	if !ok || s.Kind() != types.FieldVal {
		return false
	}
	t := s.Recv()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == "Object" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == objectPkg
}

func rewriteFile(fset *token.FileSet, f *ast.File, info *types.Info, src []byte) []edit {
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	manual := func(n ast.Node, why string) {
		fmt.Printf("MANUAL %s: %s\n", fset.Position(n.Pos()), why)
	}
	// text is src[n] with every field read inside it rewritten.
	var text func(n ast.Node) string
	text = func(n ast.Node) string {
		var es []edit
		ast.Inspect(n, func(m ast.Node) bool {
			if sel, ok := m.(*ast.SelectorExpr); ok && isObjectField(info, sel) {
				es = append(es, edit{off(sel.Sel.Pos()), off(sel.Sel.End()), getter[sel.Sel.Name]})
			}
			return true
		})
		base := off(n.Pos())
		for i := range es {
			es[i].from -= base
			es[i].to -= base
		}
		return string(apply(append([]byte(nil), src[base:off(n.End())]...), es))
	}
	readsField := func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(m ast.Node) bool {
			if sel, ok := m.(*ast.SelectorExpr); ok && isObjectField(info, sel) {
				found = true
			}
			return !found
		})
		return found
	}
	var es []edit
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			var targets []*ast.SelectorExpr
			for _, l := range n.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok && isObjectField(info, sel) {
					targets = append(targets, sel)
				}
			}
			if len(targets) == 0 {
				return true
			}
			if n.Tok != token.ASSIGN {
				manual(n, "operator assignment to a value field")
				return false
			}
			if len(n.Lhs) != len(n.Rhs) {
				manual(n, "multi-value assignment to a value field")
				return false
			}
			if len(n.Lhs) > 1 {
				for _, sel := range targets {
					if sel.Sel.Name == "IntVal" && len(targets) > 1 {
						manual(n, "tuple assignment of IntVal with another value field (the words are one)")
						return false
					}
				}
				for _, r := range n.Rhs {
					if readsField(r) {
						manual(n, "tuple assignment reading a value field")
						return false
					}
				}
			}
			var stmts []string
			for i, l := range n.Lhs {
				if sel, ok := l.(*ast.SelectorExpr); ok && isObjectField(info, sel) {
					stmts = append(stmts, text(sel.X)+"."+setter[sel.Sel.Name]+"("+text(n.Rhs[i])+")")
				} else {
					stmts = append(stmts, text(l)+" = "+text(n.Rhs[i]))
				}
			}
			es = append(es, edit{off(n.Pos()), off(n.End()), strings.Join(stmts, "; ")})
			return false
		case *ast.IncDecStmt:
			if sel, ok := n.X.(*ast.SelectorExpr); ok && isObjectField(info, sel) {
				manual(n, "++/-- of a value field")
				return false
			}
		case *ast.UnaryExpr:
			if sel, ok := n.X.(*ast.SelectorExpr); ok && n.Op == token.AND && isObjectField(info, sel) {
				manual(n, "address of a value field")
				return false
			}
		case *ast.CompositeLit:
			for _, el := range n.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok {
					if id, ok := kv.Key.(*ast.Ident); ok && getter[id.Name] != "" {
						if t, ok := info.Types[n]; !ok || isObjectType(t.Type) {
							manual(n, "composite literal naming "+id.Name)
						}
					}
				}
			}
		case *ast.SelectorExpr:
			if isObjectField(info, n) {
				es = append(es, edit{off(n.Sel.Pos()), off(n.Sel.End()), getter[n.Sel.Name]})
			}
		}
		return true
	})
	return es
}

func isObjectType(t types.Type) bool {
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == "Object" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == objectPkg
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "slotrewrite: "+format+"\n", args...)
	os.Exit(1)
}
