package diaghttp_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svcdb/svcdb/diaghttp"
)

// TestHostHeaderOnLoopback: bound to 127.0.0.1, the server answers requests
// addressed to a loopback name (any port) and refuses every other Host with
// 403, on every path, health included: a page on a rebound DNS name cannot
// read it through the operator's browser.
func TestHostHeaderOnLoopback(t *testing.T) {
	f := start(t, "tok")
	get := func(host, path string) reply {
		t.Helper()
		req, err := http.NewRequest("GET", f.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Authorization", "Bearer tok")
		res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(res.Body).WriteTo(&b)
		return reply{res.StatusCode, res.Header, b.String()}
	}
	port := f.base[strings.LastIndexByte(f.base, ':'):]
	for _, host := range []string{"127.0.0.1" + port, "localhost" + port, "LOCALHOST", "localhost.", "[::1]" + port, "[::1]", "127.0.0.2:80", "app.localhost:9090"} {
		for _, path := range []string{"/health/live", "/metrics", "/status/json", "/debug/api/ping", "/debug/"} {
			if r := get(host, path); r.code != 200 {
				t.Errorf("Host %q %s: %d %s", host, path, r.code, r.body)
			}
		}
	}
	const refused = `{"error":"this server listens on a loopback address and answers only requests addressed to localhost, 127.0.0.1 or [::1]"}`
	for _, host := range []string{"evil.example", "evil.example" + port, "localhost.evil.example", "127.0.0.1.nip.io" + port, "192.0.2.1", "[::2]:80", "0.0.0.0" + port} {
		for _, path := range []string{"/health/live", "/metrics", "/status/json", "/debug/api/ping", "/debug/"} {
			r := get(host, path)
			if r.code != 403 || r.body != refused || r.hdr.Get("Content-Type") != "application/json" {
				t.Errorf("Host %q %s: %d %s", host, path, r.code, r.body)
			}
		}
	}
	// Malformed Host headers: fasthttp itself answers 400.
	for _, host := range []string{"localhost:x", "[::1]x"} {
		if r := get(host, "/metrics"); r.code != 400 && r.code != 403 {
			t.Errorf("Host %q: %d %s", host, r.code, r.body)
		}
	}
	// HTTP/1.0 without a Host header: refused as well.
	c, err := net.Dial("tcp", strings.TrimPrefix(f.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write([]byte("GET /metrics HTTP/1.0\r\n\r\n"))
	line, _ := bufio.NewReader(c).ReadString('\n')
	if !strings.HasPrefix(line, "HTTP/1.0 403") && !strings.HasPrefix(line, "HTTP/1.1 403") {
		t.Errorf("no Host: %q", line)
	}
}

// TestProtectMetrics: with ProtectMetrics ([http] protect-metrics) /metrics
// and /status/json answer as /debug/api/* does: 401 without or with a wrong
// token, 200 with it, and 403 when no token is configured. Health stays
// public.
func TestProtectMetrics(t *testing.T) {
	f := start(t, "tok")
	open := func(token string) string {
		h := diaghttp.New(diaghttp.Config{Bind: "127.0.0.1", Token: token, ProtectMetrics: true}, f.src)
		if err := h.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = h.Shutdown(ctx)
		})
		return "http://" + h.Addr()
	}
	base := open("tok")
	for _, path := range []string{"/metrics", "/status/json"} {
		r := request(t, "GET", base+path, nil, 10*time.Second)
		if r.code != 401 || r.body != `{"error":"unauthorized"}` || r.hdr.Get("WWW-Authenticate") != `Bearer realm="svcdb"` {
			t.Errorf("%s without a token: %d %s", path, r.code, r.body)
		}
		if r := request(t, "GET", base+path, map[string]string{"Authorization": "Bearer nope"}, 10*time.Second); r.code != 401 {
			t.Errorf("%s with a wrong token: %d", path, r.code)
		}
		if r := request(t, "GET", base+path, map[string]string{"Authorization": "bearer tok"}, 10*time.Second); r.code != 200 || len(r.body) < 100 {
			t.Errorf("%s with the token: %d %.100s", path, r.code, r.body)
		}
		// The default server of the fixture keeps them public.
		if r := f.do(t, "GET", path, nil); r.code != 200 {
			t.Errorf("%s on the default server: %d", path, r.code)
		}
	}
	if r := request(t, "GET", base+"/health/ready", nil, 10*time.Second); r.code != 200 && r.code != 503 {
		t.Errorf("/health/ready: %d", r.code)
	}
	noToken := open("")
	if r := request(t, "GET", noToken+"/metrics", map[string]string{"Authorization": "Bearer x"}, 10*time.Second); r.code != 403 || !strings.Contains(r.body, "no HTTP token configured") {
		t.Errorf("/metrics with protect-metrics and no token configured: %d %s", r.code, r.body)
	}
}
