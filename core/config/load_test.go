package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeConfig writes content to <tempdir>/svcdb.toml and returns the path.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "svcdb.toml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// everyKey sets every parameter to a non-default value (databases has only
// one legal value), in the spellings a user would write.
const everyKey = `
[server]
bind = "0.0.0.0"
port = 7001
shards = 8
event-loops = 3
maxclients = 123
timeout = "2m"
tcp-keepalive = 60
databases = 16
requirepass = "file-pass-123"
protected-mode = false
enable-debug-command = "local"
loop-spin-us = 0
data-dir = "/tmp/svcdb-data"

[memory]
maxmemory = "100mb"
maxmemory-policy = "ALLKEYS-LFU"
huge-pages = false
gc-heap-floor = "32mb"
maxmemory-clients = 0

[slowlog]
log-slower-than = -1
max-len = 5
max-arg-len = 64

[hotshards]
enabled = false
hot-threshold-percent = 200
warm-threshold-percent = 75
default-period-secs = 30

[status]
memory-warning-percent = 90
connection-warning-percent = 70

[debug-bundle]
dir = "/tmp/bundles"
max-bundles = 3
ttl = "90m"

[http]
enabled = true
bind = "::1"
port = 9191
token = "file-token-456"
protect-metrics = true

[logging]
level = "warning"
format = "json"
output = "stderr"
per-request-spans = true
file-path = "/tmp/svcdb.log"

[logging.rotation]
max-size-mb = 0
frequency = "hourly"
max-files = 2

[tracing]
enabled = true
otlp-endpoint = "https://collector.example:4318/v1/traces"
sampling-rate = 0.25
service-name = "svcdb-test"

[redis]
proto-max-bulk-len = "1gb"
tracking-table-max-keys = 500
client-query-buffer-limit = 2097152
client-output-buffer-limit = "pubsub 1mb 2mb 10"
list-max-listpack-size = -3
hash-max-listpack-entries = 256
hash-max-listpack-value = 32
set-max-intset-entries = 1024
set-max-listpack-entries = 64
set-max-listpack-value = 32
zset-max-listpack-entries = 256
zset-max-listpack-value = 32
stream-node-max-entries = 50
hll-sparse-max-bytes = "2kb"
list-compress-depth = 2
sanitize-dump-payload = "yes"
notify-keyspace-events = "KEA"
busy-reply-threshold = 1000
hz = 1000
jemalloc-bg-thread = false
latency-monitor-threshold = 100
masteruser = "repl"
masterauth = "s3cret"
replica-read-only = false
replica-serve-stale-data = false
repl-diskless-sync = false
repl-backlog-size = "2mb"
repl-backlog-ttl = 60
repl-ping-replica-period = 3
repl-diskless-sync-delay = 0
repl-diskless-sync-max-replicas = 2
replicaof = "10.0.0.1  6380"
replica-priority = 0
replica-announce-ip = "192.0.2.1"
replica-announce-port = 7000
replica-announced = false
min-replicas-to-write = 2
min-replicas-max-lag = 5

[persistence]
save = "3600 1  300 100"
appendonly = true
appendfsync = "always"
dbfilename = "x.rdb"
appenddirname = "aofdir"
aof-load-truncated = false
appendfilename = "my.aof"
stop-writes-on-bgsave-error = false
rdbcompression = false
auto-aof-rewrite-percentage = 50
auto-aof-rewrite-min-size = "1mb"

[acl]
aclfile = "/tmp/users.acl"
acllog-max-len = 5
acl-pubsub-default = "allchannels"
`

// everyKeyGet is what CONFIG GET answers for each parameter after loading
// everyKey.
var everyKeyGet = map[string]string{
	"aclfile": "/tmp/users.acl", "acllog-max-len": "5", "acl-pubsub-default": "allchannels",
	"bind": "0.0.0.0", "port": "7001", "shards": "8", "event-loops": "3", "maxclients": "123",
	"timeout": "120", "tcp-keepalive": "60", "databases": "16", "requirepass": Redacted, "data-dir": "/tmp/svcdb-data",
	"protected-mode": "no", "enable-debug-command": "local", "svc-loop-spin-us": "0", "http-protect-metrics": "yes",
	"maxmemory": "104857600", "maxmemory-policy": "allkeys-lfu", "maxmemory-clients": "0", "svc-huge-pages": "no", "svc-gc-heap-floor": "33554432",
	"slowlog-log-slower-than": "-1", "slowlog-max-len": "5", "slowlog-max-arg-len": "64",
	"hotshards-enabled": "no", "hotshards-hot-threshold-percent": "200", "hotshards-warm-threshold-percent": "75",
	"hotshards-default-period-secs": "30",
	"status-memory-warning-percent": "90", "status-connection-warning-percent": "70",
	"debug-bundle-dir": "/tmp/bundles", "debug-bundle-max-bundles": "3", "debug-bundle-ttl": "1h30m",
	"http-enabled": "yes", "http-bind": "::1", "http-port": "9191", "http-token": Redacted,
	"loglevel": "warn", "logging-format": "json", "logging-output": "stderr", "logging-per-request-spans": "yes",
	"logging-file-path":            "/tmp/svcdb.log",
	"logging-rotation-max-size-mb": "0", "logging-rotation-frequency": "hourly", "logging-rotation-max-files": "2",
	"tracing-enabled": "yes", "tracing-otlp-endpoint": "https://collector.example:4318/v1/traces",
	"tracing-sampling-rate": "0.25", "tracing-service-name": "svcdb-test",
	"proto-max-bulk-len": "1073741824", "client-query-buffer-limit": "2097152", "tracking-table-max-keys": "500",
	"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2097152 10",
	"list-max-listpack-size":     "-3", "hash-max-listpack-entries": "256", "hash-max-listpack-value": "32",
	"set-max-intset-entries": "1024", "set-max-listpack-entries": "64", "set-max-listpack-value": "32", "zset-max-listpack-entries": "256",
	"zset-max-listpack-value": "32", "stream-node-max-entries": "50", "hll-sparse-max-bytes": "2048", "sanitize-dump-payload": "yes", "list-compress-depth": "2", "notify-keyspace-events": "AKE",
	"busy-reply-threshold": "1000", "hz": "500", "jemalloc-bg-thread": "no", "latency-monitor-threshold": "100",
	"save": "3600 1 300 100", "appendonly": "yes", "appendfsync": "always", "dbfilename": "x.rdb",
	"appenddirname": "aofdir", "aof-load-truncated": "no", "appendfilename": "my.aof",
	"stop-writes-on-bgsave-error": "no", "rdbcompression": "no", "auto-aof-rewrite-percentage": "50", "auto-aof-rewrite-min-size": "1048576",
	"masteruser": "repl", "masterauth": Redacted, "replica-read-only": "no", "replica-serve-stale-data": "no",
	"repl-diskless-sync": "no", "repl-backlog-size": "2097152",
	"repl-backlog-ttl": "60", "repl-ping-replica-period": "3", "repl-diskless-sync-delay": "0", "repl-diskless-sync-max-replicas": "2",
	"replicaof": "10.0.0.1 6380", "replica-priority": "0", "replica-announce-ip": "192.0.2.1",
	"replica-announce-port": "7000", "replica-announced": "no",
	"min-replicas-to-write": "2", "min-replicas-max-lag": "5",
}

func TestEveryKeyFromFileReadsBackThroughConfigGet(t *testing.T) {
	r := New()
	path := writeConfig(t, everyKey)
	if err := r.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if errs := r.Validate(); len(errs) != 0 {
		t.Fatal(errs)
	}
	if got := r.ConfigFile(); got != path {
		t.Errorf("ConfigFile() = %q, want %q", got, path)
	}
	for _, p := range r.Params() {
		want, ok := everyKeyGet[p.Name]
		if !ok {
			t.Errorf("%s: not covered by this test: add it to everyKey and everyKeyGet", p.Name)
			continue
		}
		got := r.Get([]string{p.Name})
		if len(got) != 1 || got[0] != [2]string{p.Name, want} {
			t.Errorf("CONFIG GET %s = %q, want %q", p.Name, got, want)
		}
		if _, src := r.Value(p.Name); src != SourceFile {
			t.Errorf("%s: source %v, want file (every key is in the file)", p.Name, src)
		}
		// databases, sanitize-dump-payload and maxmemory-clients accept only their default.
		if p.Default == strings.TrimSpace(want) && p.Name != "databases" && p.Name != "sanitize-dump-payload" && p.Name != "maxmemory-clients" {
			t.Errorf("%s: the test value equals the default; pick another", p.Name)
		}
	}
	if len(everyKeyGet) != len(r.Params()) {
		t.Errorf("everyKeyGet has %d entries for %d parameters", len(everyKeyGet), len(r.Params()))
	}
	// Secrets are there for the wiring, just never shown.
	if v, _ := r.Value("requirepass"); v != "file-pass-123" {
		t.Errorf("requirepass = %q", v)
	}
	if v := r.String("http-token"); v != "file-token-456" {
		t.Errorf("http-token = %q", v)
	}
}

func TestTypedGetters(t *testing.T) {
	r := New()
	if err := r.LoadFile(writeConfig(t, everyKey)); err != nil {
		t.Fatal(err)
	}
	if got := r.Int("port"); got != 7001 {
		t.Errorf("Int(port) = %d", got)
	}
	if got := r.Size("maxmemory"); got != 100<<20 {
		t.Errorf("Size(maxmemory) = %d", got)
	}
	if got := r.Bool("http-enabled"); !got {
		t.Error("Bool(http-enabled) = false")
	}
	if got := r.Float("tracing-sampling-rate"); got != 0.25 {
		t.Errorf("Float = %v", got)
	}
	if got := r.Duration("timeout"); got.Seconds() != 120 {
		t.Errorf("Duration(timeout) = %v", got)
	}
	if got := r.Duration("debug-bundle-ttl"); got.Minutes() != 90 {
		t.Errorf("Duration(ttl) = %v", got)
	}
	if got := r.Int("LIST-MAX-ZIPLIST-SIZE"); got != -3 { // alias, any case
		t.Errorf("Int(alias) = %d", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("Bool on an Int parameter did not panic")
		}
	}()
	r.Bool("port")
}

// TestBadInput: every kind of bad input yields exactly one message naming
// file:line:col, table, key and the allowed values.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       string // the whole message; "svcdb.toml" stands for the path
		noValidate bool
	}{
		{"unknown key", "[server]\nport = 6379\nprot = 6380\n",
			`svcdb.toml:3:1: [server] prot: unknown key (did you mean "port"?); allowed bind, port, shards, event-loops, maxclients, timeout, tcp-keepalive, databases, requirepass, protected-mode, enable-debug-command, loop-spin-us, data-dir`, false},
		{"unknown table", "[sever]\nport = 1\n",
			`svcdb.toml:1:2: [sever]: unknown table (did you mean "server"?); allowed server, memory, slowlog, hotshards, status, debug-bundle, http, logging, logging.rotation, tracing, redis, persistence, acl`, false},
		{"unknown sub-table", "[logging.rotate]\nmax-files = 1\n",
			`svcdb.toml:1:10: [logging.rotate]: unknown table; allowed server, memory, slowlog, hotshards, status, debug-bundle, http, logging, logging.rotation, tracing, redis, persistence, acl`, false},
		{"key outside tables", "port = 1\n",
			`svcdb.toml:1:1: port: key outside any table; allowed keys inside the tables server, memory, slowlog, hotshards, status, debug-bundle, http, logging, logging.rotation, tracing, redis, persistence, acl`, false},
		{"wrong type", "[server]\nport = \"6379\"\n",
			`svcdb.toml:2:8: [server] port: wrong type: got string "6379", want integer; allowed 0..65535`, false},
		{"wrong type bool", "[http]\nenabled = \"yes\"\n",
			`svcdb.toml:2:11: [http] enabled: wrong type: got string "yes", want boolean (true or false); allowed true or false (CONFIG SET, env, flags: yes, no, true, false)`, false},
		{"table as key", "[logging]\nrotation = 5\n",
			`svcdb.toml:2:1: [logging.rotation]: must be a table, got integer`, false},
		{"out of range", "[server]\nport = 70000\n",
			`svcdb.toml:2:8: [server] port: value 70000 out of range; allowed 0..65535`, false},
		{"out of range float", "[tracing]\nsampling-rate = 1.5\n",
			`svcdb.toml:2:17: [tracing] sampling-rate: value 1.5 out of range; allowed 0..1`, false},
		{"databases", "[server]\ndatabases = 8\n",
			`svcdb.toml:2:13: [server] databases: value 8 out of range; allowed 16 (svcdb has exactly 16 databases, SELECT 0..15)`, false},
		{"bad enum", "[logging]\nformat = \"xml\"\n",
			`svcdb.toml:2:10: [logging] format: invalid value "xml"; allowed pretty, json`, false},
		{"bad level", "[logging]\nlevel = \"loud\"\n",
			`svcdb.toml:2:9: [logging] level: invalid value "loud"; allowed trace, debug, info, warn, error (also verbose=debug, notice=info, warning=warn)`, false},
		{"bad ip", "[http]\nbind = \"localhost\"\n",
			`svcdb.toml:2:8: [http] bind: "localhost" is not an IP address; allowed an IPv4 or IPv6 literal such as 127.0.0.1, 0.0.0.0 or ::1`, false},
		{"bad url", "[tracing]\notlp-endpoint = \"127.0.0.1:4318\"\n",
			`svcdb.toml:2:17: [tracing] otlp-endpoint: invalid URL "127.0.0.1:4318"; allowed an http:// or https:// URL with a host, e.g. http://127.0.0.1:4318`, false},
		{"bad size unit", "[memory]\nmaxmemory = \"10tb\"\n",
			`svcdb.toml:2:13: [memory] maxmemory: invalid size "10tb"; allowed 0..9223372036854775807 bytes, as a byte count or with a unit b, k (1000), kb (1024), m, mb, g, gb, e.g. 100mb`, false},
		{"size below min", "[redis]\nproto-max-bulk-len = \"1kb\"\n",
			`svcdb.toml:2:22: [redis] proto-max-bulk-len: value 1kb out of range; allowed 1048576..9223372036854775807 bytes, as a byte count or with a unit b, k (1000), kb (1024), m, mb, g, gb, e.g. 100mb`, false},
		{"bad duration", "[debug-bundle]\nttl = \"1 day\"\n",
			`svcdb.toml:2:7: [debug-bundle] ttl: invalid duration "1 day"; allowed 1s..8760h, a Go duration such as "30s", "5m", "24h"`, false},
		{"duration as integer", "[debug-bundle]\nttl = 86400\n",
			`svcdb.toml:2:7: [debug-bundle] ttl: wrong type: got integer 86400, want string such as "30s"; allowed 1s..8760h, a Go duration such as "30s", "5m", "24h"`, false},
		{"fractional seconds", "[server]\ntimeout = \"1500ms\"\n",
			`svcdb.toml:2:11: [server] timeout: duration "1500ms" is not a whole number of seconds; allowed 0..2147483647 seconds, as whole seconds or a Go duration such as "30s"`, false},
		{"bad save", "[persistence]\nsave = \"60\"\n",
			`svcdb.toml:2:8: [persistence] save: invalid save rules "60"; allowed "" (no snapshots) or "<seconds> <changes>" pairs, e.g. "3600 1 300 100"`, false},
		{"empty service name", "[tracing]\nservice-name = \" \"\n",
			`svcdb.toml:2:16: [tracing] service-name: must not be empty; allowed a non-empty string`, false},
		{"syntax", "[server]\nport = = 1\n",
			`svcdb.toml:2:8: invalid TOML: unexpected character U+003D '=' at start of value`, true},
		{"duplicate key", "[server]\nport = 1\nport = 2\n",
			`svcdb.toml:3:1: invalid TOML: key port is already defined`, true},
		{"rotation without file-path", "[logging.rotation]\nfrequency = \"daily\"\nmax-files = 3\n",
			`svcdb.toml:3:13: [logging.rotation] max-files: log rotation is configured but [logging] file-path is empty; allowed set [logging] file-path, or leave [logging.rotation] at its defaults`, false},
		{"rotation that never rotates", "[logging]\nfile-path = \"/tmp/x.log\"\n[logging.rotation]\nmax-size-mb = 0\nfrequency = \"never\"\n",
			`svcdb.toml:4:15: [logging.rotation] max-size-mb: max-size-mb 0 with frequency never would never rotate the log file; allowed max-size-mb > 0, or frequency daily or hourly`, false},
		{"warm above hot", "[hotshards]\nhot-threshold-percent = 40\n",
			`svcdb.toml:2:25: [hotshards] hot-threshold-percent: warm-threshold-percent 50 is not below hot-threshold-percent 40; allowed warm-threshold-percent < hot-threshold-percent`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.file)
			r := New()
			err := r.LoadFile(path)
			var errs []error
			if err != nil {
				errs = append(errs, err)
			} else {
				errs = r.Validate()
			}
			if len(errs) != 1 {
				t.Fatalf("want one error, got %v", errs)
			}
			got := strings.ReplaceAll(errs[0].Error(), path, "svcdb.toml")
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			var ce *ConfigError
			if !errors.As(errs[0], &ce) {
				t.Fatalf("%T is not a *ConfigError", errs[0])
			}
			if strings.Contains(tc.want, "svcdb.toml:") && (ce.File != path || ce.Line == 0 || ce.Column == 0) {
				t.Errorf("position missing: %+v", ce)
			}
			if err != nil && r.ConfigFile() != "" {
				t.Error("a file that failed to load became the CONFIG REWRITE target")
			}
		})
	}
}

func TestLoadReportsEveryProblemAndAppliesTheRest(t *testing.T) {
	r := New()
	path := writeConfig(t, "[server]\nport = 70000\nmaxclients = 5\nshards = \"x\"\n[nope]\n")
	err := r.LoadFile(path)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 3 {
		t.Fatalf("want 3 errors, got %v", err)
	}
	for i, line := range []int{2, 4, 5} {
		if list[i].Line != line {
			t.Errorf("error %d at line %d, want %d (sorted by position): %v", i, list[i].Line, line, list[i])
		}
	}
	if got := r.Int("maxclients"); got != 5 {
		t.Errorf("the valid value was not applied: maxclients = %d", got)
	}
	if got := r.Int("port"); got != 6379 {
		t.Errorf("port = %d", got)
	}
}

func TestTOMLSpellings(t *testing.T) {
	// Dotted keys, inline tables, quoted keys, literal strings, integers with
	// underscores: all TOML, all accepted, positions still found.
	r := New()
	err := r.LoadFile(writeConfig(t, `
server.maxclients = 77   # dotted key at the root
http = { enabled = true, "port" = 9_292 }
[memory]
"maxmemory" = 1_048_576
[logging.rotation]
max-files = 9
[logging]
level = 'debug'
file-path = """/tmp/l.log"""
[tracing]
sampling-rate = 1
`))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"loglevel": "debug", "http-enabled": "yes", "http-port": "9292", "maxmemory": "1048576",
		"logging-rotation-max-files": "9", "maxclients": "77", "logging-file-path": "/tmp/l.log",
		"tracing-sampling-rate": "1",
	} {
		if v, _ := r.Value(name); v != want {
			t.Errorf("%s = %q, want %q", name, v, want)
		}
	}
	err = New().LoadFile(writeConfig(t, "http = { enabled = true, port = 99999 }\n"))
	if err == nil || !strings.HasSuffix(strings.SplitN(err.Error(), ": ", 2)[0], ":1:33") {
		t.Errorf("inline-table value error not positioned at the value: %v", err)
	}
}

func TestPrecedenceDefaultFileEnvFlag(t *testing.T) {
	r := New()
	check := func(step, name, want string, wantSrc Source) {
		t.Helper()
		v, src := r.Value(name)
		if v != want || src != wantSrc {
			t.Errorf("after %s: %s = %q (%v), want %q (%v)", step, name, v, src, want, wantSrc)
		}
	}
	check("nothing", "port", "6379", SourceDefault)
	if err := r.LoadFile(writeConfig(t, "[server]\nport = 7000\nmaxclients = 50\nshards = 4\n[http]\ntoken = \"from-file\"\n")); err != nil {
		t.Fatal(err)
	}
	check("file", "port", "7000", SourceFile)
	check("file", "shards", "4", SourceFile)
	if err := r.LoadEnv([]string{"PATH=/bin", "SVC_SERVER_PORT=7001", "SVC_SERVER_MAXCLIENTS=60", "SVC_HTTP_TOKEN=from-env", "HOME=/root"}); err != nil {
		t.Fatal(err)
	}
	check("env", "port", "7001", SourceEnv)
	check("env", "maxclients", "60", SourceEnv)
	check("env", "http-token", "from-env", SourceEnv)
	check("env", "shards", "4", SourceFile)
	if err := r.Set("port", "7002", SourceFlag); err != nil {
		t.Fatal(err)
	}
	if err := r.ApplyFlag("http-port", "9999"); err != nil {
		t.Fatal(err)
	}
	check("flag", "port", "7002", SourceFlag)
	check("flag", "http-port", "9999", SourceFlag)
	check("flag", "http-enabled", "yes", SourceFlag) // --http-port implies enabled
	check("flag", "maxclients", "60", SourceEnv)
	check("flag", "shards", "4", SourceFile)
	check("flag", "bind", "127.0.0.1", SourceDefault)
	if err := r.Set("maxclients", "70", SourceRuntime); err != nil {
		t.Fatal(err)
	}
	check("CONFIG SET", "maxclients", "70", SourceRuntime)

	// Entries carries the same sources (for /debug/api/config).
	for _, e := range r.Entries() {
		if e.Name == "port" && (e.Source != SourceFlag || e.Source.String() != "flag") {
			t.Errorf("Entries: port source %v", e.Source)
		}
	}
}

func TestFlagErrors(t *testing.T) {
	r := New()
	err := r.ApplyFlag("port", "70000")
	if err == nil || err.Error() != "flag --port: [server] port: value 70000 out of range; allowed 0..65535" {
		t.Errorf("got %v", err)
	}
	err = r.ApplyFlag("http-bind", "localhost")
	if err == nil || !strings.HasPrefix(err.Error(), `flag --http-bind: [http] bind: "localhost" is not an IP address`) {
		t.Errorf("got %v", err)
	}
	if err := r.ApplyFlag("loglevel", "verbose"); err != nil || r.String("loglevel") != "debug" {
		t.Errorf("--loglevel verbose: %v, %q", err, r.String("loglevel"))
	}
	if err := r.ApplyFlag("timeout", "30s"); err != nil || r.String("timeout") != "30" {
		t.Errorf("--timeout 30s: %v, %q", err, r.String("timeout"))
	}
	if err := r.ApplyFlag("nope", "1"); err == nil {
		t.Error("unknown flag accepted")
	}
	if err := r.Set("nope", "1", SourceFlag); err == nil || err.Error() != "nope: unknown parameter" {
		t.Errorf("got %v", err)
	}
	for _, f := range r.Flags() {
		if r.Lookup(f.Param) == nil || f.Usage == "" {
			t.Errorf("flag %s: parameter %q, usage %q", f.Flag, f.Param, f.Usage)
		}
	}
}

func TestLoadEnv(t *testing.T) {
	r := New()
	err := r.LoadEnv([]string{
		"SVC_HTTP_ENABLED=true",
		"SVC_LOGGING_ROTATION_MAX_SIZE_MB=5",
		"SVC_SERVER_PROT=1",
		"SVC_SERVER_PORT=x",
		"SVC_HTTP_TOKEN=env-secret",
		"OTHER_SVC_X=1",
	})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("want 2 errors, got %v", err)
	}
	if got, want := list[0].Error(), `environment SVC_SERVER_PROT: unknown variable (did you mean "SVC_SERVER_PORT"?); allowed SVC_<TABLE>_<KEY> of a parameter, e.g. SVC_HTTP_TOKEN (see docs/configuration.md)`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := list[1].Error(), `environment SVC_SERVER_PORT: [server] port: invalid integer "x"; allowed 0..65535`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if !r.Bool("http-enabled") || r.Int("logging-rotation-max-size-mb") != 5 || r.String("http-token") != "env-secret" {
		t.Error("valid variables not applied")
	}
	// The env rotation value needs a file-path: Validate names the variable.
	errs := r.Validate()
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "environment SVC_LOGGING_ROTATION_MAX_SIZE_MB: [logging.rotation] max-size-mb: log rotation is configured") {
		t.Errorf("Validate: %v", errs)
	}
	// ... and an env file-path fixes a file's rotation.
	r2 := New()
	if err := r2.LoadFile(writeConfig(t, "[logging.rotation]\nmax-files = 3\n")); err != nil {
		t.Fatal(err)
	}
	if err := r2.LoadEnv([]string{"SVC_LOGGING_FILE_PATH=/tmp/x.log"}); err != nil {
		t.Fatal(err)
	}
	if errs := r2.Validate(); len(errs) != 0 {
		t.Errorf("Validate: %v", errs)
	}
}

func TestEnvNames(t *testing.T) {
	r := New()
	for name, env := range map[string]string{
		"http-token": "SVC_HTTP_TOKEN", "logging-rotation-max-size-mb": "SVC_LOGGING_ROTATION_MAX_SIZE_MB",
		"port": "SVC_SERVER_PORT", "debug-bundle-ttl": "SVC_DEBUG_BUNDLE_TTL", "hz": "SVC_REDIS_HZ",
	} {
		if got := r.Lookup(name).EnvName; got != env {
			t.Errorf("%s: EnvName %s, want %s", name, got, env)
		}
	}
}

func TestACLUsers(t *testing.T) {
	r := New()
	doc := "[server]\nport = 1\n\n[[acl.user]]\nname = \"app\"\nrules = \"on >pw ~app:* +@read\"\n\n[[acl.user]]\nname = \"ops\"\nrules = \"on >x +@all\"\n"
	if err := r.LoadTOML("svcdb.toml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	got := r.ACLUsers()
	want := []ACLUser{{Name: "app", Rules: "on >pw ~app:* +@read", File: "svcdb.toml", Line: 4}, {Name: "ops", Rules: "on >x +@all", File: "svcdb.toml", Line: 8}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ACLUsers = %+v", got)
	}
	for _, tc := range []struct{ doc, want string }{
		{"[[acl.user]]\nname = 1\n", "svcdb.toml:1:1: [acl.user] name: must be a string, got integer"},
		{"[[acl.user]]\nrules = \"on\"\n", "svcdb.toml:1:1: [acl.user] name: missing or empty: every [[acl.user]] needs a name"},
		{"[[acl.user]]\nname = \"a\"\npass = \"x\"\n", "svcdb.toml:1:1: [acl.user] pass: unknown key; allowed name, rules"},
		{"[acl]\nuser = \"x\"\n", "svcdb.toml:2:1: [acl] user: must be an array of tables ([[acl.user]]), got string"},
	} {
		err := New().LoadTOML("svcdb.toml", []byte(tc.doc))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: got %v, want %s", tc.doc, err, tc.want)
		}
	}
}
