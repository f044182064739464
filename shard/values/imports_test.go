package values

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/svcdb/svcdb"

// importRule is one arrow that must not exist in the import graph: pkg's
// non-test dependencies, direct or not, may include no package of ours
// outside allowed.
type importRule struct {
	pkg     string
	allowed func(dep string) bool
}

var importRules = []importRule{
	{
		// The encodings are a leaf: nothing of ours but themselves, the
		// listpack format and LZF (sibling leaves, see doc.go) and core, which
		// itself imports nothing of ours (RESP's number and case rules).
		pkg: module + "/shard/values",
		allowed: func(dep string) bool {
			return dep == module+"/shard/values" || dep == module+"/shard/listpack" ||
				dep == module+"/shard/lzf" || strings.HasPrefix(dep, module+"/core/")
		},
	},
	{
		// The keyspace owns one shard's data and what commands do to it; it
		// never reaches the runtime (tokens, queues, the Runtime): what it
		// needs from it is in the Env the runtime builds (shard/keyspace
		// doc.go).
		pkg: module + "/shard/keyspace",
		allowed: func(dep string) bool {
			return dep != module+"/shard" && !under(dep, commandsRoot)
		},
	},
	{
		// The command handlers run with their shards held: they reach data
		// through the keyspace and never the runtime.
		pkg: commandsRoot,
		allowed: func(dep string) bool {
			return dep != module+"/shard"
		},
	},
	{
		// The RDB codec reads and writes files of values; it never reaches
		// into the keyspace or the runtime that hold them.
		pkg: module + "/shard/rdb",
		allowed: func(dep string) bool {
			return dep != module+"/shard"
		},
	},
	{
		// The client-side caching tables know a connection only through
		// tracking.Client and the runtime only through netloop's glue:
		// nothing of ours but core (netloop/tracking doc.go).
		pkg: module + "/netloop/tracking",
		allowed: func(dep string) bool {
			return dep == module+"/netloop/tracking" || strings.HasPrefix(dep, module+"/core/")
		},
	},
	{
		// The Pub/Sub registry knows a connection only through
		// pubsub.Subscriber and keyspace events only through netloop's
		// glue: nothing of ours but core (netloop/pubsub doc.go).
		pkg: module + "/netloop/pubsub",
		allowed: func(dep string) bool {
			return dep == module+"/netloop/pubsub" || strings.HasPrefix(dep, module+"/core/")
		},
	},
}

const commandsRoot = module + "/shard/commands"

// under reports whether pkg is root or a package below it.
func under(pkg, root string) bool {
	return pkg == root || strings.HasPrefix(pkg, root+"/")
}

// familyRule is the rule of a command family package below shard/commands
// (zsets, streams, and every family added later): the keyspace and the
// encodings, never the runtime, the table package or another family.
func familyRule(pkg string) func(string) bool {
	return func(dep string) bool {
		return dep != module+"/shard" && (dep == pkg || !under(dep, commandsRoot))
	}
}

// families lists the packages below shard/commands with go list.
func families(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", commandsRoot+"/...").Output()
	if err != nil {
		t.Fatalf("go list %s/...: %v", commandsRoot, err)
	}
	var fs []string
	for _, p := range strings.Fields(string(out)) {
		if p != commandsRoot {
			fs = append(fs, p)
		}
	}
	return fs
}

// deps lists pkg's non-test dependencies (pkg included) with go list -deps.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the import-graph test needs the go command: %v", err)
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// violations is the packages of ours among pkg's dependencies that rule
// does not allow.
func violations(t *testing.T, pkg string, allowed func(string) bool) []string {
	var bad []string
	for _, d := range deps(t, pkg) {
		if (d == module || strings.HasPrefix(d, module+"/")) && !allowed(d) {
			bad = append(bad, d)
		}
	}
	return bad
}

func TestImportGraph(t *testing.T) {
	for _, r := range importRules {
		if bad := violations(t, r.pkg, r.allowed); len(bad) > 0 {
			t.Errorf("%s must not import %s", r.pkg, strings.Join(bad, ", "))
		}
	}
	fams := families(t)
	if len(fams) < 2 {
		t.Fatalf("go list found the command families %v; want zsets and streams at least", fams)
	}
	for _, f := range fams {
		if bad := violations(t, f, familyRule(f)); len(bad) > 0 {
			t.Errorf("%s must not import %s", f, strings.Join(bad, ", "))
		}
	}
	// The check itself must be able to fail: the keyspace and runtime,
	// which import the encodings and the codecs, break the leaf rule.
	if bad := violations(t, module+"/shard", importRules[0].allowed); len(bad) == 0 {
		t.Errorf("the leaf rule found nothing wrong with %s/shard, which imports shard/rdb: the check is broken", module)
	}
	// And the keyspace rule fails on the runtime, which is shard itself.
	if bad := violations(t, module+"/shard", importRules[1].allowed); len(bad) == 0 {
		t.Errorf("the keyspace rule found nothing wrong with %s/shard: the check is broken", module)
	}
	// And the family rule fails on the table package, which imports every
	// family.
	if bad := violations(t, commandsRoot, familyRule(fams[0])); len(bad) == 0 {
		t.Errorf("the family rule found nothing wrong with %s: the check is broken", commandsRoot)
	}
}
