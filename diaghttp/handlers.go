package diaghttp

import (
	"strconv"

	"github.com/svcdb/svcdb/netloop"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/config"

	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/svcdb/svcdb/core/lifecycle"
)

const (
	apiPrefix   = "/debug/api/"
	ctJSON      = "application/json"
	ctPromText  = "text/plain; version=0.0.4; charset=utf-8"
	noTokenText = "no HTTP token configured: set [http] token in the config file, SVC_HTTP_TOKEN in the environment or --http-token on the command line"
)

// handle is the single entry point: hygiene headers, method and body checks,
// then routing.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")

	if s.loopbackOnly && !allowedHost(ctx.Host()) {
		jsonError(ctx, fasthttp.StatusForbidden, badHostText)
		return
	}

	if !ctx.IsGet() && !ctx.IsHead() {
		h.Set(fasthttp.HeaderAllow, "GET, HEAD")
		jsonError(ctx, fasthttp.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if len(ctx.Request.Body()) > 0 {
		jsonError(ctx, fasthttp.StatusRequestEntityTooLarge, "request bodies are not accepted")
		return
	}

	path := string(ctx.Path())
	switch path {
	case "/health/live", "/healthz":
		s.health(ctx, s.src.Lifecycle() != lifecycle.ShuttingDown) // alive while draining
		return
	case "/health/ready", "/readyz":
		s.health(ctx, s.src.Lifecycle() == lifecycle.Ready)
		return
	case "/metrics":
		h.Set(fasthttp.HeaderCacheControl, "no-store")
		if s.cfg.ProtectMetrics && !s.tokenAccepted(ctx) {
			return
		}
		ctx.SetContentType(ctPromText)
		s.metrics.write(ctx)
		return
	case "/status/json": // public, as /metrics: it reveals no secrets
		h.Set(fasthttp.HeaderCacheControl, "no-store")
		if s.cfg.ProtectMetrics && !s.tokenAccepted(ctx) {
			return
		}
		ctx.SetContentType(ctJSON)
		ctx.SetBody(s.src.StatusJSON())
		return
	}
	if strings.HasPrefix(path, apiPrefix) {
		s.api(ctx, path[len(apiPrefix):])
		return
	}
	if path == "/debug" || strings.HasPrefix(path, uiPrefix) { // public, holds no data (ui.go)
		s.ui(ctx, path)
		return
	}
	jsonError(ctx, fasthttp.StatusNotFound, "not found")
}

// health answers a probe: the status code says whether the probe passes, the
// body names the lifecycle state.
func (s *Server) health(ctx *fasthttp.RequestCtx, ok bool) {
	st := s.src.Lifecycle()
	word := "ok"
	switch st {
	case lifecycle.Starting:
		word = "starting"
	case lifecycle.Draining:
		word = "draining"
	case lifecycle.ShuttingDown:
		word = "shutting down"
	}
	code := fasthttp.StatusOK
	if !ok {
		code = fasthttp.StatusServiceUnavailable
	}
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.SetContentType(ctJSON)
	ctx.SetStatusCode(code)
	ctx.SetBodyString(`{"status":"` + word + `"}`)
}

// api serves /debug/api/*: authorization first (so unauthenticated callers
// cannot probe which endpoints exist), then routing.
func (s *Server) api(ctx *fasthttp.RequestCtx, sub string) {
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	if !s.tokenAccepted(ctx) {
		return
	}
	switch sub {
	case "ping":
		ctx.SetContentType(ctJSON)
		ctx.SetBodyString(`{"ok":true}`)
	case "clients":
		limit := defaultClientLimit
		if raw := ctx.QueryArgs().Peek("limit"); raw != nil {
			n, err := strconv.Atoi(string(raw))
			if err != nil || n < 1 || n > maxClientLimit {
				jsonError(ctx, fasthttp.StatusBadRequest, "limit must be an integer from 1 to 10000")
				return
			}
			limit = n
		}
		total, list := s.src.Clients(limit)
		writeAPIJSON(ctx, struct {
			Total   int                  `json:"total"`
			Limit   int                  `json:"limit"`
			Clients []netloop.ClientInfo `json:"clients"`
		}{total, limit, list})
	case "users":
		writeAPIJSON(ctx, struct {
			Users []acl.UserSummary `json:"users"`
		}{usersOf(s.src)})
	case "config":
		writeAPIJSON(ctx, struct {
			Parameters []config.Entry `json:"parameters"`
		}{s.src.Config()})
	case "keyspace-events": // events.go
		s.keyspaceEvents(ctx)
	case "cluster", "metrics", "slowlog", "latency", "scripts": // api.go
		s.debugAPI(ctx, sub)
	default:
		if rest, ok := strings.CutPrefix(sub, "bundle/"); ok { // bundle.go
			s.bundleAPI(ctx, rest)
			return
		}
		jsonError(ctx, fasthttp.StatusNotFound, "not found")
	}
}

// tokenAccepted reports whether the request carries the token; when not, it
// has answered: 403 when no token is configured (nothing is ever open
// without one), 401 with WWW-Authenticate when it is missing or wrong.
func (s *Server) tokenAccepted(ctx *fasthttp.RequestCtx) bool {
	if s.cfg.Token == "" {
		jsonError(ctx, fasthttp.StatusForbidden, noTokenText)
		return false
	}
	if !s.authorized(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)) {
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="svcdb"`)
		jsonError(ctx, fasthttp.StatusUnauthorized, "unauthorized")
		return false
	}
	return true
}

// badHostText answers a request whose Host is not a loopback name while the
// server is bound to loopback.
const badHostText = "this server listens on a loopback address and answers only requests addressed to localhost, 127.0.0.1 or [::1]"

// allowedHost reports whether a Host header (with or without a port) names
// this machine's loopback: localhost (or a name under .localhost, which
// browsers resolve to loopback themselves), an IPv4 address in 127.0.0.0/8
// or [::1]. A server bound to loopback refuses every other Host: a web page
// on evil.example whose name an attacker re-points at 127.0.0.1 (DNS
// rebinding) makes the browser send Host: evil.example, and must not read
// the diagnostics from the operator's machine. An empty Host (HTTP/1.0
// without one) is refused too: browsers always send it.
func allowedHost(host []byte) bool {
	h := string(host)
	if strings.HasPrefix(h, "[") { // [v6] or [v6]:port
		end := strings.IndexByte(h, ']')
		if end < 0 || (end+1 < len(h) && !validPort(h[end+1:])) {
			return false
		}
		ip := net.ParseIP(h[1:end])
		return ip != nil && ip.IsLoopback()
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		if !validPort(h[i:]) {
			return false
		}
		h = h[:i]
	}
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.To4() != nil && ip.IsLoopback()
}

// validPort reports whether p is ":" followed by 1 to 5 digits.
func validPort(p string) bool {
	if len(p) < 2 || len(p) > 6 || p[0] != ':' {
		return false
	}
	for i := 1; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}

// authorized checks "Bearer <token>" (scheme case-insensitive). Both sides
// are hashed first so the comparison is constant-time in length as well.
func (s *Server) authorized(hdr []byte) bool {
	hdr = bytes.TrimSpace(hdr)
	sp := bytes.IndexByte(hdr, ' ')
	if sp < 0 || !strings.EqualFold(string(hdr[:sp]), "bearer") {
		return false
	}
	got := sha256.Sum256(bytes.TrimSpace(hdr[sp+1:]))
	want := sha256.Sum256([]byte(s.cfg.Token))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// /debug/api/clients is bounded: ?limit= (default 1000, at most 10000).
const (
	defaultClientLimit = 1000
	maxClientLimit     = 10000
)

// jsonError writes {"error":msg}; msg is a constant of this package, so it
// needs no escaping beyond what jsonString does.
func jsonError(ctx *fasthttp.RequestCtx, code int, msg string) {
	ctx.SetContentType(ctJSON)
	ctx.SetStatusCode(code)
	ctx.SetBodyString(`{"error":` + jsonString(msg) + `}`)
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
