package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// netnsScript runs inside a private network namespace (and PID namespace,
// so that everything it starts dies with it): the loopback interface up, and
// 10.77.0.1 as a second, non-loopback address of this namespace. svcdb
// (port 7001) and redis-server 7.0 (port 7002) both listen on 0.0.0.0 there,
// which no other host and no other process of this machine can reach, and
// redis-cli talks to each from 127.0.0.1 (local) and from 10.77.0.1 (a real
// non-loopback peer address, as a client on another host has). Each step
// prints "### <step> <port>" and then redis-cli's output.
const netnsScript = `
set -u
ip link set lo up
ip addr add 10.77.0.1/32 dev lo
"$SVCDB" --bind 0.0.0.0 --port 7001 --enable-debug-command local >"$DIR/svcdb.log" 2>&1 &
redis-server --bind 0.0.0.0 --port 7002 --save "" --appendonly no --dir "$DIR" --enable-debug-command local >"$DIR/redis.log" 2>&1 &
for p in 7001 7002; do
	i=0
	until [ "$(redis-cli -p $p PING 2>/dev/null)" = PONG ]; do
		i=$((i+1)); [ $i -gt 200 ] && { echo "port $p never answered"; exit 1; }
		sleep 0.05
	done
done
step() {
	name=$1; shift
	for p in 7001 7002; do
		echo "### $name $p"
		redis-cli -p $p "$@" 2>&1
	done
}
step remote-ping          -h 10.77.0.1 PING
step local-ping           -h 127.0.0.1 PING
step local-debug          -h 127.0.0.1 DEBUG SLEEP 0
step protected-mode-off   -h 127.0.0.1 CONFIG SET protected-mode no
step remote-ping-open     -h 10.77.0.1 PING
step remote-debug         -h 10.77.0.1 DEBUG SLEEP 0
step remote-config        -h 10.77.0.1 CONFIG SET protected-mode yes
step remote-ping-closed   -h 10.77.0.1 PING
step set-password         -h 127.0.0.1 CONFIG SET requirepass pw
step remote-noauth        -h 10.77.0.1 PING
step remote-auth          -h 10.77.0.1 -a pw --no-auth-warning PING
step drop-password        -h 127.0.0.1 -a pw --no-auth-warning CONFIG SET requirepass ""
step remote-ping-again    -h 10.77.0.1 PING
`

// TestProtectedModeOverRealNetwork: protected mode and enable-debug-command
// local against a real non-loopback client address, side by side with
// redis-server 7.0: every step's redis-cli output must be the same. The
// servers bind 0.0.0.0 only inside a throw-away network namespace (unshare;
// it needs user namespaces, as make test has as root), which the kernel
// removes with its last process: nothing is left behind and nothing is
// reachable from outside.
func TestProtectedModeOverRealNetwork(t *testing.T) {
	for _, tool := range []string{"unshare", "ip", "redis-cli", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, tool+" is required for the network-namespace test")
		}
	}
	if out, err := exec.Command("unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "true").CombinedOutput(); err != nil {
		skipOrFail(t, "cannot create a user and network namespace: "+err.Error()+": "+string(out))
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "--kill-child", "sh", "-c", netnsScript)
	cmd.Env = append(os.Environ(), "SVCDB="+bin, "DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// step -> port -> output
	got := map[string]map[string]string{}
	var order []string
	var step, port string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "###" {
			step, port = f[1], f[2]
			if got[step] == nil {
				got[step] = map[string]string{}
				order = append(order, step)
			}
			continue
		}
		if step != "" {
			got[step][port] += line + "\n"
		}
	}
	if len(order) != 13 {
		t.Fatalf("script output:\n%s", out)
	}
	for _, s := range order {
		if svc, rds := strings.TrimSpace(got[s]["7001"]), strings.TrimSpace(got[s]["7002"]); svc != rds {
			t.Errorf("%s: svcdb %q, redis-server %q", s, svc, rds)
		}
	}
	// The outputs that make this test mean something.
	for s, want := range map[string]string{
		"remote-ping":        "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user.",
		"local-ping":         "PONG",
		"local-debug":        "OK",
		"remote-ping-open":   "PONG",
		"remote-debug":       "ERR DEBUG command not allowed.",
		"remote-ping-closed": "DENIED",
		"remote-noauth":      "NOAUTH",
		"remote-auth":        "PONG",
		"remote-ping-again":  "DENIED",
	} {
		if !strings.HasPrefix(got[s]["7001"], want) {
			t.Errorf("%s: svcdb said %q, want %q...", s, got[s]["7001"], want)
		}
	}
	logs, _ := os.ReadFile(filepath.Join(dir, "svcdb.log"))
	if !strings.Contains(string(logs), "protected mode is on and the default user has no password") {
		t.Errorf("no protected-mode warning at start-up:\n%s", logs)
	}
}

func skipOrFail(t *testing.T, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg + " (set CI=true to make this a failure)")
}

// TestSecretWarnings: a secret given as a flag is named (never shown) in a
// start-up warning; one from the environment is not warned about; a
// world-readable configuration file holding a secret is warned about, and
// CONFIG REWRITE leaves it 0600.
func TestSecretWarnings(t *testing.T) {
	bin := buildBinary(t)
	const flagWarn = "secrets given as command-line flags are visible to every user"
	const fileWarn = "the configuration file holds secrets and other users may read it"

	cmd, _, _, out := startProcessEnv(t, bin, nil, "--requirepass", "flag-secret-123")
	logs := out.String()
	if !strings.Contains(logs, flagWarn) || !strings.Contains(logs, "requirepass") || strings.Contains(logs, "flag-secret-123") {
		t.Errorf("--requirepass: want the warning naming requirepass without its value:\n%s", logs)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	waitExit(t, cmd)

	cmd, _, _, out = startProcessEnv(t, bin, []string{"SVC_SERVER_REQUIREPASS=env-secret-123"})
	if logs := out.String(); strings.Contains(logs, flagWarn) || strings.Contains(logs, fileWarn) || strings.Contains(logs, "env-secret-123") {
		t.Errorf("SVC_SERVER_REQUIREPASS: no warning wanted:\n%s", logs)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	waitExit(t, cmd)

	path := filepath.Join(t.TempDir(), "svcdb.toml")
	if err := os.WriteFile(path, []byte("[server]\nrequirepass = \"file-secret-123\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	cmd, addr, _, out := startProcessEnv(t, bin, nil, "--config", path)
	if logs := out.String(); !strings.Contains(logs, fileWarn) || strings.Contains(logs, "file-secret-123") {
		t.Errorf("0644 file with requirepass: want the file warning:\n%s", logs)
	}
	rc := redis.NewClient(&redis.Options{Addr: addr, Password: "file-secret-123"})
	defer rc.Close()
	ctx := context.Background()
	if err := rc.ConfigSet(ctx, "maxclients", "99").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.ConfigRewrite(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("after CONFIG REWRITE: %v %v, want mode 0600", st.Mode().Perm(), err)
	}
	_ = cmd.Process.Signal(os.Interrupt)
	waitExit(t, cmd)
}
