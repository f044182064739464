package config

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
)

// configSet runs CONFIG SET args... as netloop will: SetMany with
// SourceRuntime, replying "OK" or "-" + err.Error().
func configSet(r *Registry, args ...string) string {
	var pairs [][2]string
	for i := 0; i+1 < len(args); i += 2 {
		pairs = append(pairs, [2]string{args[i], args[i+1]})
	}
	if err := r.SetMany(pairs, SourceRuntime); err != nil {
		return "-" + err.Error()
	}
	return "OK"
}

// Redis 7.0.15's replies, recorded from redis-server (and re-checked against a
// live one by TestConfigSetMatchesRedisServer when it is installed).
var redisSetReplies = []struct {
	args []string
	want string
}{
	{[]string{"foo", "1"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
	{[]string{"databases", "3"}, "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"},
	{[]string{"appenddirname", "x"}, "-ERR CONFIG SET failed (possibly related to argument 'appenddirname') - can't set immutable config"},
	{[]string{"maxmemory", "1.5gb"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"},
	{[]string{"maxmemory", "abc"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"},
	{[]string{"maxmemory", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"},
	{[]string{"MAXMEMORY", "abc"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"},
	{[]string{"maxmemory-policy", "bogus"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory-policy') - argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"},
	{[]string{"appendonly", "maybe"}, "-ERR CONFIG SET failed (possibly related to argument 'appendonly') - argument must be 'yes' or 'no'"},
	{[]string{"appendfsync", "bogus"}, "-ERR CONFIG SET failed (possibly related to argument 'appendfsync') - argument(s) must be one of the following: everysec, always, no"},
	{[]string{"hz", "abc"}, "-ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"},
	{[]string{"maxclients", "0"}, "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - argument must be between 1 and 4294967295 inclusive"},
	{[]string{"timeout", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument must be between 0 and 2147483647 inclusive"},
	{[]string{"timeout", "1.5"}, "-ERR CONFIG SET failed (possibly related to argument 'timeout') - argument couldn't be parsed into an integer"},
	{[]string{"tcp-keepalive", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'tcp-keepalive') - argument must be between 0 and 2147483647 inclusive"},
	{[]string{"maxmemory", "1", "maxmemory", "2"}, "-ERR CONFIG SET failed (possibly related to argument 'maxmemory') - duplicate parameter"},
	{[]string{"maxmemory", "1", "MAXMEMORY", "2"}, "-ERR CONFIG SET failed (possibly related to argument 'MAXMEMORY') - duplicate parameter"},
	{[]string{"databases", "1", "foo", "2"}, "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"},
	{[]string{"foo", "2", "databases", "1"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
	{[]string{"maxmemory", "1", "databases", "3"}, "-ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"},
	{[]string{"maxmemory", "x", "foo", "3"}, "-ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
	{[]string{"client-output-buffer-limit", "normal 0 0"}, "-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Wrong number of arguments in buffer limit configuration."},
	{[]string{"client-output-buffer-limit", "bogus 0 0 0"}, "-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Invalid client class specified in buffer limit configuration."},
	{[]string{"client-output-buffer-limit", "master 1 2 3"}, "-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Invalid client class specified in buffer limit configuration."},
	{[]string{"client-output-buffer-limit", "normal a 0 0"}, "-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Error in hard, soft or soft_seconds setting in buffer limit configuration."},
	{[]string{"client-output-buffer-limit", "normal 1 2 -3"}, "-ERR CONFIG SET failed (possibly related to argument 'client-output-buffer-limit') - Error in hard, soft or soft_seconds setting in buffer limit configuration."},
	{[]string{"save", "1 2 3"}, "-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
	{[]string{"save", "a b"}, "-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
	{[]string{"save", "0 0"}, "-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
	{[]string{"save", "-1 1"}, "-ERR CONFIG SET failed (possibly related to argument 'save') - Invalid save parameters"},
	{[]string{"notify-keyspace-events", "Z"}, "-ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid event class character. Use 'Ag$lshzxeKEtmdn'."},
	{[]string{"list-max-listpack-size", "abc"}, "-ERR CONFIG SET failed (possibly related to argument 'list-max-listpack-size') - argument couldn't be parsed into an integer"},
	{[]string{"hash-max-ziplist-entries", "abc"}, "-ERR CONFIG SET failed (possibly related to argument 'hash-max-ziplist-entries') - argument couldn't be parsed into an integer"},
	{[]string{"slowlog-log-slower-than", "abc"}, "-ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument couldn't be parsed into an integer"},
	{[]string{"slowlog-log-slower-than", "-2"}, "-ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be between -1 and 9223372036854775807 inclusive"},
	{[]string{"slowlog-max-len", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'slowlog-max-len') - argument must be between 0 and 9223372036854775807 inclusive"},
	{[]string{"proto-max-bulk-len", "10"}, "-ERR CONFIG SET failed (possibly related to argument 'proto-max-bulk-len') - argument must be between 1048576 and 9223372036854775807 inclusive"},
	{[]string{"client-query-buffer-limit", "10"}, "-ERR CONFIG SET failed (possibly related to argument 'client-query-buffer-limit') - argument must be between 1048576 and 9223372036854775807 inclusive"},
	{[]string{"lua-time-limit", "-5"}, "-ERR CONFIG SET failed (possibly related to argument 'lua-time-limit') - argument must be between 0 and 9223372036854775807 inclusive"},
	{[]string{"latency-monitor-threshold", "-1"}, "-ERR CONFIG SET failed (possibly related to argument 'latency-monitor-threshold') - argument must be between 0 and 9223372036854775807 inclusive"},
	// Accepted values.
	{[]string{"maxmemory", "1gb"}, "OK"},
	{[]string{"maxmemory", "10gB", "maxmemory-policy", "ALLKEYS-LRU"}, "OK"},
	{[]string{"appendonly", "YES"}, "OK"},
	{[]string{"hz", "100000"}, "OK"},
	{[]string{"save", "3600 1 300 100"}, "OK"},
	{[]string{"save", ""}, "OK"},
	{[]string{"notify-keyspace-events", "KEA"}, "OK"},
	{[]string{"client-output-buffer-limit", "pubsub 1mb 2mb 10"}, "OK"},
	{[]string{"client-output-buffer-limit", "replica 1 2 3 normal 4 5 6"}, "OK"},
	{[]string{"client-output-buffer-limit", ""}, "OK"},
	{[]string{"list-max-ziplist-size", "-5"}, "OK"},
	{[]string{"timeout", "0"}, "OK"},
}

// Values CONFIG GET must then show, as Redis does after the same commands.
var redisGetAfter = []string{"maxmemory", "maxmemory-policy", "appendonly", "hz", "save",
	"notify-keyspace-events", "client-output-buffer-limit", "list-max-listpack-size", "list-max-ziplist-size",
	"timeout", "lua-time-limit", "busy-reply-threshold", "hash-max-ziplist-entries"}

var redisGetWant = map[string]string{
	"maxmemory": "10737418240", "maxmemory-policy": "allkeys-lru", "appendonly": "yes", "hz": "500", "save": "",
	"notify-keyspace-events": "AKE", "client-output-buffer-limit": "normal 4 5 6 slave 1 2 3 pubsub 1048576 2097152 10",
	"list-max-listpack-size": "-5", "list-max-ziplist-size": "-5", "timeout": "0", "lua-time-limit": "5000",
	"busy-reply-threshold": "5000", "hash-max-ziplist-entries": "512",
}

func TestConfigSetRedisTexts(t *testing.T) {
	r := New()
	for _, tc := range redisSetReplies {
		if got := configSet(r, tc.args...); got != tc.want {
			t.Errorf("CONFIG SET %q\n got  %s\n want %s", tc.args, got, tc.want)
		}
	}
	for _, name := range redisGetAfter {
		got := r.Get([]string{name})
		if len(got) != 1 || got[0][1] != redisGetWant[name] {
			t.Errorf("CONFIG GET %s = %q, want %q", name, got, redisGetWant[name])
		}
	}
	var se *SetError
	if err := r.SetMany([][2]string{{"port", "1"}}, SourceRuntime); !errors.As(err, &se) || se.Kind != SetImmutable || se.Arg != "port" {
		t.Errorf("port: %#v", err)
	} else if se.Error() != "ERR CONFIG SET failed (possibly related to argument 'port') - can't set immutable config" {
		t.Errorf("port: %s", se)
	}
}

// TestConfigSetMatchesRedisServer replays the same commands against a real
// redis-server (required in CI; see redistest) so that the texts above stay
// Redis' texts.
func TestConfigSetMatchesRedisServer(t *testing.T) {
	conn, err := net.Dial("tcp", redistest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rd := bufio.NewReader(conn)
	do := func(args ...string) []string {
		var b strings.Builder
		fmt.Fprintf(&b, "*%d\r\n", len(args))
		for _, a := range args {
			fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := conn.Write([]byte(b.String())); err != nil {
			t.Fatal(err)
		}
		return readReply(t, rd)
	}
	if v := do("INFO", "server"); !strings.Contains(v[0], "redis_version:7.") {
		t.Skip("not Redis 7")
	}
	for _, tc := range redisSetReplies {
		got := do(append([]string{"CONFIG", "SET"}, tc.args...)...)[0]
		if got != tc.want {
			t.Errorf("redis-server: CONFIG SET %q\n got  %s\n want %s", tc.args, got, tc.want)
		}
	}
	for _, name := range redisGetAfter {
		got := do("CONFIG", "GET", name)
		if len(got) != 2 || got[1] != redisGetWant[name] {
			t.Errorf("redis-server: CONFIG GET %s = %q, want %q", name, got, redisGetWant[name])
		}
	}
}

// readReply reads one RESP2 reply: simple/error/integer as one string
// ("OK", "-ERR ..."), bulk as its text, arrays flattened.
func readReply(t *testing.T, rd *bufio.Reader) []string {
	t.Helper()
	line, err := rd.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch line[0] {
	case '+', ':':
		return []string{line[1:]}
	case '-':
		return []string{line}
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return []string{""}
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			t.Fatal(err)
		}
		return []string{string(buf[:n])}
	case '*':
		n, _ := strconv.Atoi(line[1:])
		var out []string
		for i := 0; i < n; i++ {
			out = append(out, readReply(t, rd)...)
		}
		return out
	}
	t.Fatalf("bad reply %q", line)
	return nil
}

func TestSetManyAllOrNothing(t *testing.T) {
	r := New()
	got := configSet(r, "maxmemory", "1mb", "maxclients", "0")
	if !strings.HasPrefix(got, "-ERR CONFIG SET failed (possibly related to argument 'maxclients')") {
		t.Fatal(got)
	}
	if v, src := r.Value("maxmemory"); v != "0" || src != SourceDefault {
		t.Errorf("maxmemory changed by a failed CONFIG SET: %q %v", v, src)
	}

	// A failing hook rolls back the values and re-applies the old ones.
	var calls []string
	r.OnChange("maxmemory", func(v string) error { calls = append(calls, "maxmemory="+v); return nil })
	r.OnChange("loglevel", func(v string) error { calls = append(calls, "loglevel="+v); return nil })
	r.OnChange("maxclients", func(v string) error {
		calls = append(calls, "maxclients="+v)
		if v == "5" {
			return errors.New("cannot shrink below the connected clients")
		}
		return nil
	})
	got = configSet(r, "maxmemory", "1mb", "loglevel", "debug", "maxclients", "5")
	if want := "-ERR CONFIG SET failed (possibly related to argument 'maxclients') - cannot shrink below the connected clients"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	wantCalls := "maxmemory=1048576 loglevel=debug maxclients=5 maxclients=10000 loglevel=info maxmemory=0"
	if strings.Join(calls, " ") != wantCalls {
		t.Errorf("hook calls %q\nwant       %q", strings.Join(calls, " "), wantCalls)
	}
	for name, want := range map[string]string{"maxmemory": "0", "loglevel": "info", "maxclients": "10000"} {
		if v, src := r.Value(name); v != want || src != SourceDefault {
			t.Errorf("after rollback %s = %q (%v), want %q (default)", name, v, src, want)
		}
	}

	// Success: hooks see the canonical value before SetMany returns.
	calls = nil
	if got := configSet(r, "loglevel", "NOTICE"); got != "OK" {
		t.Fatal(got)
	}
	if len(calls) != 0 {
		t.Errorf("hooks: %q (notice is info: no change, no hook)", calls)
	}
	calls = nil
	if got := configSet(r, "loglevel", "warning"); got != "OK" || strings.Join(calls, " ") != "loglevel=warn" {
		t.Errorf("%s, hooks %q", got, calls)
	}
	if got := r.Get([]string{"loglevel"}); got[0][1] != "warn" {
		t.Errorf("CONFIG GET loglevel = %q", got)
	}
	if _, src := r.Value("loglevel"); src != SourceRuntime {
		t.Errorf("source %v", src)
	}
	if got := configSet(r, "loglevel", "loud"); got != "-ERR CONFIG SET failed (possibly related to argument 'loglevel') - argument(s) must be one of the following: trace, debug, info, warn, error, verbose, notice, warning" {
		t.Error(got)
	}
}

func TestCrossFieldRulesAtRuntime(t *testing.T) {
	r := New()
	got := configSet(r, "hotshards-warm-threshold-percent", "100")
	if want := "-ERR CONFIG SET failed (possibly related to argument 'hotshards-warm-threshold-percent') - warm-threshold-percent 100 is not below hot-threshold-percent 100"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got = configSet(r, "hotshards-hot-threshold-percent", "30")
	if want := "-ERR CONFIG SET failed (possibly related to argument 'hotshards-hot-threshold-percent') - warm-threshold-percent 50 is not below hot-threshold-percent 30"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Both together are judged on the final state.
	if got := configSet(r, "hotshards-hot-threshold-percent", "30", "hotshards-warm-threshold-percent", "20"); got != "OK" {
		t.Error(got)
	}
}

func TestUnhooked(t *testing.T) {
	r := New()
	n := len(r.Unhooked())
	r.OnChange("loglevel", func(string) error { return nil })
	if len(r.Unhooked()) != n-1 {
		t.Error("hook not counted")
	}
	for _, name := range r.Unhooked() {
		if !r.Lookup(name).Mutable {
			t.Errorf("%s is immutable", name)
		}
	}
}

func TestGetPatterns(t *testing.T) {
	r := New()
	names := func(kv [][2]string) string {
		var s []string
		for _, p := range kv {
			s = append(s, p[0])
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		patterns []string
		want     string
	}{
		{[]string{"maxmemory"}, "maxmemory"},
		{[]string{"MAXMEMORY"}, "MAXMEMORY"}, // as given, like Redis
		{[]string{"maxmemory", "MAXMEMORY"}, "maxmemory"},
		{[]string{"MAXMEM*"}, "maxmemory maxmemory-clients maxmemory-policy"},
		{[]string{"*max-*-entries*"}, "hash-max-listpack-entries hash-max-ziplist-entries set-max-intset-entries set-max-listpack-entries zset-max-listpack-entries zset-max-ziplist-entries"},
		{[]string{"slowlog-[lm]*"}, "slowlog-log-slower-than slowlog-max-len slowlog-max-arg-len"},
		{[]string{"http-?ort", "port", "p?rt"}, "http-port port"},
		{[]string{"nosuch", "nosuch*"}, ""},
		{[]string{"lua-time-limit"}, "lua-time-limit"},
		{[]string{"dir"}, "dir"},
	} {
		if got := names(r.Get(tc.patterns)); got != tc.want {
			t.Errorf("CONFIG GET %q = %q, want %q", tc.patterns, got, tc.want)
		}
	}
	all := r.Get([]string{"*"})
	want := 0
	for _, p := range r.Params() {
		want += 1 + len(p.Aliases)
	}
	if len(all) != want {
		t.Errorf("CONFIG GET * gave %d names, want %d", len(all), want)
	}
}

// TestSecretsNeverShown sets both secrets from every source and checks every
// output the package produces.
func TestSecretsNeverShown(t *testing.T) {
	const filePass, envTok, runPass, badTok = "file-pass-Zq1", "env-token-Zq2", "runtime-pass-Zq3", "bad-token-Zq4"
	const masterAuth = "master-auth-Zq5"
	secrets := []string{filePass, envTok, runPass, badTok, "98765", masterAuth}
	r := New()
	if err := r.LoadFile(writeConfig(t, "[server]\nrequirepass = \""+filePass+"\"\n[http]\ntoken = \"x\"\n[redis]\nmasterauth = \""+masterAuth+"\"\n")); err != nil {
		t.Fatal(err)
	}
	if err := r.LoadEnv([]string{"SVC_HTTP_TOKEN=" + envTok}); err != nil {
		t.Fatal(err)
	}
	var outputs []string
	for _, kv := range r.Get([]string{"*"}) {
		outputs = append(outputs, kv[0]+"="+kv[1])
	}
	if got := r.Get([]string{"requirepass", "http-token"}); got[0][1] != Redacted || got[1][1] != Redacted {
		t.Errorf("CONFIG GET shows %q", got)
	}
	if got := configSet(r, "requirepass", runPass); got != "OK" {
		t.Fatal(got)
	}
	for _, e := range r.Entries() {
		outputs = append(outputs, fmt.Sprintf("%+v", e))
		if e.Secret && e.Value != Redacted {
			t.Errorf("Entries: %s = %q", e.Name, e.Value)
		}
	}
	outputs = append(outputs, r.GenerateTOML(), r.Markdown(), fmt.Sprint(r.Get([]string{"*"})))
	for _, f := range r.Flags() {
		outputs = append(outputs, f.Usage)
	}
	// Errors about secret values.
	for _, file := range []string{
		"[http]\ntoken = 98765\n",
		"[http]\ntoken = [\"" + badTok + "\"]\n",
		"[server]\nrequirepass = { x = \"" + badTok + "\" }\n",
		"[http]\ntokn = \"" + badTok + "\"\n",
	} {
		if err := New().LoadFile(writeConfig(t, file)); err == nil {
			t.Errorf("%q loaded", file)
		} else {
			outputs = append(outputs, err.Error())
		}
	}
	if err := configSet(r, "http-token", badTok); !strings.Contains(err, "immutable") {
		t.Errorf("http-token at runtime: %s", err)
	} else {
		outputs = append(outputs, err)
	}
	for _, out := range outputs {
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("secret %q shown in:\n%s", s, out)
			}
		}
	}
	// Unset secrets read "" (nothing to hide), set ones "(redacted)".
	if got := New().Get([]string{"requirepass"}); got[0][1] != "" {
		t.Errorf("unset requirepass reads %q", got[0][1])
	}
	if v, _ := r.Value("requirepass"); v != runPass {
		t.Errorf("Value(requirepass) = %q: the wiring needs the real one", v)
	}
}

func TestSizeParsing(t *testing.T) {
	// Redis 7.0's memtoull, checked against redis-server's CONFIG SET maxmemory.
	for in, want := range map[string]int64{
		"0": 0, "1": 1, "01": 1, "1b": 1, "1k": 1000, "1K": 1000, "1kb": 1024, "1KB": 1024,
		"1m": 1000000, "1mb": 1 << 20, "1g": 1000000000, "1gb": 1 << 30, "10gB": 10 << 30,
	} {
		if got, ok := parseSize(in); !ok || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "mb", "1.5gb", "-1", "+1", "1tb", " 1", "1 ", "1e3", "0x10", "99999999999999999999", "9999999999gb"} {
		if got, ok := parseSize(in); ok {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
	for n, want := range map[int64]string{0: "0", 1: "1", 1024: "1kb", 1536: "1536", 512 << 20: "512mb", 1 << 30: "1gb", 1000: "1000"} {
		if got := formatSize(n); got != want {
			t.Errorf("formatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestKeyspaceEventsAndHz(t *testing.T) {
	// Canonical texts as redis-server prints them after CONFIG SET.
	for in, want := range map[string]string{"KEA": "AKE", "Ex": "xE", "g$lshzxetd": "A", "Am": "Am", "n": "n", "K": "K", "": "", "An": "An"} {
		if got, ve := checkKeyspaceEvents("", in); ve != nil || got != want {
			t.Errorf("%q -> %q, %v; want %q", in, got, ve, want)
		}
	}
	for in, want := range map[string]string{"0": "1", "10": "10", "600": "500"} {
		if got, _ := checkHz("", in); got != want {
			t.Errorf("hz %s -> %s, want %s", in, got, want)
		}
	}
	n, rep, ps := OutputBufferLimits(New().String("client-output-buffer-limit"))
	if n != (OutputBufferLimit{}) || rep != (OutputBufferLimit{268435456, 67108864, 60}) || ps != (OutputBufferLimit{33554432, 8388608, 60}) {
		t.Errorf("OutputBufferLimits: %v %v %v", n, rep, ps)
	}
	if got := SaveRules("3600 1 300 100"); len(got) != 2 || got[1] != (SaveRule{300, 100}) {
		t.Errorf("SaveRules: %v", got)
	}
}

func TestSetStartupIgnoresMutability(t *testing.T) {
	r := New()
	if err := r.Set("port", "0", SourceFlag); err != nil {
		t.Fatal(err)
	}
	// Runtime goes through SetMany's rules.
	if err := r.Set("port", "1", SourceRuntime); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("runtime port: %v", err)
	}
	var se *SetError
	if err := r.Set("nosuch", "1", SourceRuntime); !errors.As(err, &se) || se.Kind != SetUnknown {
		t.Errorf("%v", err)
	}
}

// TestConcurrentUse: readers, CONFIG SET and REWRITE at once, for -race.
func TestConcurrentUse(t *testing.T) {
	r := New()
	path := writeConfig(t, "[server]\nmaxclients = 10\n")
	if err := r.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	var hookSeen atomic.Int64
	r.OnChange("maxclients", func(v string) error {
		_ = r.Get([]string{"max*"}) // hooks may read
		_ = r.ConfigFile()
		hookSeen.Add(1)
		return nil
	})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				switch i % 5 {
				case 0:
					configSet(r, "maxclients", strconv.Itoa(100+i), "loglevel", "debug")
				case 1:
					r.Get([]string{"*"})
				case 2:
					r.Entries()
				case 3:
					r.Int("maxclients")
				case 4:
					if i%25 == 4 {
						if err := r.Rewrite(path); err != nil {
							t.Error(err)
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if hookSeen.Load() == 0 {
		t.Error("hook never ran")
	}
}

func TestLoadStartup(t *testing.T) {
	r := New()
	path := writeConfig(t, "[server]\nport = 70000\n[logging.rotation]\nmax-files = 2\n")
	errs := r.LoadStartup(path, []string{"SVC_NOPE=1"}, [][2]string{{"shards", "0"}, {"loglevel", "debug"}})
	var got []string
	for _, e := range errs {
		got = append(got, strings.ReplaceAll(e.Error(), path, "svcdb.toml"))
	}
	want := []string{
		"svcdb.toml:2:8: [server] port: value 70000 out of range; allowed 0..65535",
		"environment SVC_NOPE: unknown variable; allowed SVC_<TABLE>_<KEY> of a parameter, e.g. SVC_HTTP_TOKEN (see docs/configuration.md)",
		"flag --shards: [server] shards: value 0 out of range; allowed 1..256",
		"svcdb.toml:4:13: [logging.rotation] max-files: log rotation is configured but [logging] file-path is empty; allowed set [logging] file-path, or leave [logging.rotation] at its defaults",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r.String("loglevel") != "debug" {
		t.Error("valid flag not applied")
	}
	if errs := New().LoadStartup("", nil, nil); len(errs) != 0 {
		t.Errorf("defaults: %v", errs)
	}
	if b, _ := json.Marshal(r.Entries()[1]); !strings.Contains(string(b), `"name":"port","table":"server","key":"port","type":"int","value":"6379","default":"6379","source":"default","mutable":false`) {
		t.Errorf("Entry JSON: %s", b)
	}
}
