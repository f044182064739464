package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const rewriteBefore = `# My svcdb config.
# Keep this comment.
status.memory-warning-percent = 70

[server]
port = 7000          # fixed port
maxclients=100   # odd spacing kept
timeout = 10

"shards" = 4

[memory]
# limit
maxmemory = "1gb"

[logging]
level = "info"   # was info
file-path = "/tmp/svcdb.log"
rotation.max-files = 3

[http]
enabled = true
token = "file-token"
`

const rewriteAfter = `# My svcdb config.
# Keep this comment.
status.memory-warning-percent = 70
status.connection-warning-percent = 60

[server]
port = 7000          # fixed port
maxclients=500   # odd spacing kept
timeout = 10

"shards" = 4
requirepass = "run-secret"

[memory]
# limit
maxmemory = "2gb"

[logging]
level = "debug"   # was info
file-path = "/tmp/svcdb.log"
rotation.max-files = 3
per-request-spans = true

[http]
enabled = true
token = "file-token"

# Added by CONFIG REWRITE.
[slowlog]
max-len = 5

# Added by CONFIG REWRITE.
[hotshards]
hot-threshold-percent = 300
`

func TestRewriteKeepsCommentsAndRoundTrips(t *testing.T) {
	path := writeConfig(t, rewriteBefore)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	r := New()
	if err := r.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	// An override from the environment is not written into the file.
	if err := r.LoadEnv([]string{"SVC_SERVER_TIMEOUT=30"}); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][]string{
		{"maxclients", "500"},                              // in the file: replaced in place
		{"maxmemory", "2GB"},                               // quoted, unit kept readable
		{"loglevel", "debug"},                              // trailing comment kept
		{"slowlog-max-len", "5"},                           // table missing: appended
		{"hotshards-hot-threshold-percent", "300"},         // ditto, in table order
		{"requirepass", "run-secret"},                      // key missing: after the table's last key
		{"logging-per-request-spans", "yes"},               // ditto, after a dotted key of the section
		{"status-connection-warning-percent", "60"},        // table only dotted: sibling dotted key
		{"hz", "10"},                                       // back at its default and absent: not added
		{"tcp-keepalive", "300"},                           // ditto
		{"maxmemory-policy", "noeviction", "save", "60 1"}, // several in one CONFIG SET
	} {
		if got := configSet(r, kv...); got != "OK" {
			t.Fatalf("CONFIG SET %q: %s", kv, got)
		}
	}
	if err := r.Rewrite(path); err != nil {
		t.Fatal(err)
	}
	// save was set too: it goes into a new [persistence] table at the end.
	want := rewriteAfter + "\n# Added by CONFIG REWRITE.\n[persistence]\nsave = \"60 1\"\n"
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", got, want)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600: the file holds secrets, so 0640 loses its group bit", st.Mode().Perm())
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("leftover files: %v", ents)
	}

	// Load → set → rewrite → load gives the new values.
	r2 := New()
	if err := r2.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"maxclients": "500", "maxmemory": "2147483648", "loglevel": "debug", "slowlog-max-len": "5",
		"hotshards-hot-threshold-percent": "300", "requirepass": "run-secret", "logging-per-request-spans": "yes",
		"status-connection-warning-percent": "60", "status-memory-warning-percent": "70",
		"timeout": "10", "save": "60 1", "logging-rotation-max-files": "3", "http-token": "file-token",
	} {
		if v, _ := r2.Value(name); v != want {
			t.Errorf("after reload %s = %q, want %q", name, v, want)
		}
	}
	// Nothing changed: a second rewrite leaves the bytes alone.
	if err := r.Rewrite(path); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); string(again) != want {
		t.Errorf("second rewrite changed the file:\n%s", again)
	}
}

func TestRewriteCreatesMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.toml")
	r := New()
	if got := configSet(r, "maxmemory", "1gb", "requirepass", "s3"); got != "OK" {
		t.Fatal(got)
	}
	if err := r.Rewrite(path); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := "# Added by CONFIG REWRITE.\n[server]\nrequirepass = \"s3\"\n\n# Added by CONFIG REWRITE.\n[memory]\nmaxmemory = \"1gb\"\n"
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600 (it may hold a secret)", st.Mode().Perm())
	}
}

func TestRewriteInlineTables(t *testing.T) {
	path := writeConfig(t, "hotshards = { enabled = true }  # inline\n")
	r := New()
	if err := r.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if got := configSet(r, "hotshards-enabled", "no"); got != "OK" {
		t.Fatal(got)
	}
	if err := r.Rewrite(path); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); string(got) != "hotshards = { enabled = false }  # inline\n" {
		t.Errorf("got %q", got)
	}
	// A key the inline table lacks cannot be added: an error, file untouched.
	if got := configSet(r, "hotshards-hot-threshold-percent", "300"); got != "OK" {
		t.Fatal(got)
	}
	err := r.Rewrite(path)
	if err == nil || !strings.Contains(err.Error(), "[hotshards] is an inline table there and lacks hot-threshold-percent") {
		t.Errorf("got %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "hotshards = { enabled = false }  # inline\n" {
		t.Errorf("file changed: %q", got)
	}
}

func TestRewriteRefusesABrokenFile(t *testing.T) {
	path := writeConfig(t, "[server]\nport = 1\n")
	r := New()
	if err := r.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	broken := "[server]\nport = = 1\n"
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	configSet(r, "maxclients", "5")
	if err := r.Rewrite(path); err == nil || !strings.Contains(err.Error(), "invalid TOML") {
		t.Errorf("got %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != broken {
		t.Error("broken file was replaced")
	}
}

// TestRewriteModeFollowsSecrets: a file without a secret keeps its mode; once
// CONFIG REWRITE writes a secret into it, group and others lose access; a
// file that already held one is tightened on its next rewrite.
func TestRewriteModeFollowsSecrets(t *testing.T) {
	mode := func(path string) os.FileMode {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	path := writeConfig(t, "[server]\nmaxclients = 10\n")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	r := New()
	if err := r.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	configSet(r, "maxclients", "20")
	if err := r.Rewrite(path); err != nil {
		t.Fatal(err)
	}
	if m := mode(path); m != 0o644 {
		t.Errorf("no secret: mode %v, want 0644 kept", m)
	}
	configSet(r, "requirepass", "now-a-secret")
	if err := r.Rewrite(path); err != nil {
		t.Fatal(err)
	}
	if m := mode(path); m != 0o600 {
		t.Errorf("requirepass written: mode %v, want 0600", m)
	}

	// A world-readable file that already holds the HTTP token.
	path2 := writeConfig(t, "[http]\ntoken = \"file-token\"\n[server]\nmaxclients = 10\n")
	if err := os.Chmod(path2, 0o664); err != nil {
		t.Fatal(err)
	}
	r2 := New()
	if err := r2.LoadFile(path2); err != nil {
		t.Fatal(err)
	}
	if got := r2.SecretsFrom(SourceFile); len(got) != 1 || got[0] != "http-token" {
		t.Errorf("SecretsFrom(file) = %v", got)
	}
	configSet(r2, "maxclients", "30")
	if err := r2.Rewrite(path2); err != nil {
		t.Fatal(err)
	}
	if m := mode(path2); m != 0o600 {
		t.Errorf("token in the file: mode %v, want 0600", m)
	}
}
