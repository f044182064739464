package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/core/redistest"
)

// statusHealth reads /status/json's health section over HTTP.
func statusHealth(t *testing.T, base string) (verdict string, issues map[string]string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(base + "/status/json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var doc struct {
		Health struct {
			Status string `json:"status"`
			Issues []struct {
				Code, Severity, Message string
			} `json:"issues"`
		} `json:"health"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("status/json: %v: %.300s", err, b)
	}
	issues = map[string]string{}
	for _, is := range doc.Health.Issues {
		issues[is.Code] = is.Severity + ": " + is.Message
	}
	return doc.Health.Status, issues
}

// TestStatusHealthReplicasLost: /status/json's health of a master is
// healthy without replicas (a single node is deliberate) and with its
// replica, and degraded with a replicas_lost warning once the replica it had
// is gone, naming -NOREPLICAS when min-replicas-to-write now refuses writes;
// healthy again when a replica is back.
func TestStatusHealthReplicasLost(t *testing.T) {
	bin := buildBinary(t)
	ctx := context.Background()
	cmd, maddr, _, out := startProcessEnv(t, bin, nil, "--http-port", "0", "--data-dir", t.TempDir())
	defer stop(t, cmd)
	m := regexp.MustCompile(`diagnostics on (http://\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no diagnostics address in the output:\n%s", out)
	}
	base := m[1]
	_, mport, _ := net.SplitHostPort(maddr)
	mc := client(t, maddr)
	if v, issues := statusHealth(t, base); v != "healthy" || issues["replicas_lost"] != "" {
		t.Errorf("a master that never had replicas: %s %v", v, issues)
	}

	rsrv := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", mport)
	r := client(t, rsrv.Addr)
	waitFor(t, "the replica online", func() bool {
		return strings.Contains(mc.Info(ctx, "replication").Val(), "state=online")
	})
	if v, issues := statusHealth(t, base); v != "healthy" {
		t.Errorf("with its replica: %s %v", v, issues)
	}

	if err := r.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replicas_lost", func() bool {
		v, issues := statusHealth(t, base)
		return v == "degraded" && strings.HasPrefix(issues["replicas_lost"], "warning: no replica is online")
	})

	if err := mc.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	if v, issues := statusHealth(t, base); v != "degraded" || !strings.Contains(issues["replicas_lost"], "refused with -NOREPLICAS") {
		t.Errorf("below min-replicas-to-write: %s %v", v, issues)
	}

	if err := r.Do(ctx, "REPLICAOF", "127.0.0.1", mport).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "healthy with the replica back", func() bool {
		v, _ := statusHealth(t, base)
		return v == "healthy"
	})
	if got := mc.Do(ctx, "STATUS", "JSON").Val(); !strings.Contains(got.(string), `"status":"healthy"`) {
		t.Errorf("STATUS JSON with the replica back: %.300s", got)
	}
}
