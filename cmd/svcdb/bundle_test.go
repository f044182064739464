package main

import (
	"archive/zip"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBundlesWired: the binary's bundle service is the same for DEBUG
// BUNDLE and /debug/api/bundle/*, stores under <data-dir>/bundles, follows
// CONFIG SET of max-bundles and ttl, and keeps the token out of bundles.
func TestBundlesWired(t *testing.T) {
	bin := buildBinary(t)
	data := t.TempDir()
	const token = "t0ken-bundle-wired"
	cmd, addr, _, out := startProcessEnv(t, bin, []string{"SVC_HTTP_TOKEN=" + token, "SVC_SERVER_DATA_DIR=" + data}, "--http-port", "0")
	m := regexp.MustCompile(`diagnostics on (http://\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no diagnostics address in the output:\n%s", out)
	}
	base := m[1]
	dir := filepath.Join(data, "bundles")

	// RESP, pipelined with a PING so the reading stops at its PONG.
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := c.Write([]byte("DEBUG BUNDLE GENERATE\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 4096)
	for !bytes.HasSuffix(got, []byte("+PONG\r\n")) {
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("DEBUG BUNDLE GENERATE: %v after %q", err, got)
		}
		got = append(got, buf[:n]...)
	}
	if !bytes.Contains(got, []byte(dir+"/svcdb-bundle-")) || !bytes.Contains(got, []byte("manifest.json")) {
		t.Fatalf("DEBUG BUNDLE GENERATE: %q", got)
	}

	if r := roundTrip(t, addr, "CONFIG SET debug-bundle-max-bundles 1\r\n"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET debug-bundle-max-bundles: %q", r)
	}
	req, _ := http.NewRequest("GET", base+"/debug/api/bundle/generate", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	id := res.Header.Get("X-Bundle-Id")
	if res.StatusCode != 200 || id == "" || bytes.Contains(body, []byte(token)) {
		t.Fatalf("generate: %d id %q", res.StatusCode, id)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if bytes.Contains(b, []byte(token)) {
			t.Fatalf("%s holds the token", f.Name)
		}
	}
	// max-bundles 1: the RESP bundle is gone, the HTTP one stays.
	if names := zipNames(t, dir); len(names) != 1 || names[0] != "svcdb-bundle-"+id+".zip" {
		t.Fatalf("bundles after max-bundles 1: %v", names)
	}
	if r := roundTrip(t, addr, "DEBUG BUNDLE LIST\r\n"); !strings.HasPrefix(r, "*1\r\n") || !strings.Contains(r, id) {
		t.Fatalf("DEBUG BUNDLE LIST: %q", r)
	}
	if r := roundTrip(t, addr, "CONFIG SET debug-bundle-ttl 1s\r\n"); r != "+OK\r\n" {
		t.Fatalf("CONFIG SET debug-bundle-ttl: %q", r)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(zipNames(t, dir)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("ttl 1s: %v still there", zipNames(t, dir))
		}
		time.Sleep(50 * time.Millisecond)
	}

	_ = cmd.Process.Signal(os.Interrupt)
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if s := out.String(); strings.Contains(s, token) || strings.Contains(s, "BUG:") {
		t.Fatalf("logs:\n%s", s)
	}
}

func zipNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".zip") {
			out = append(out, e.Name())
		}
	}
	return out
}
