package diaghttp

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/valyala/fasthttp"
)

// The debug UI (SPEC Part A "Debug UI views", Part B "Authentication and
// HTTP hygiene"): static files embedded in the binary and served at /debug/.
// The page and its assets are public and hold no data: the page asks for the
// token, keeps it in sessionStorage and calls /debug/api/* with a Bearer
// header. There is no build step: ui/ holds plain HTML, CSS and JavaScript
// modules, and ui/vendor/uplot the charting library as published on npm
// (its VERSION file records the version and the tarball's sha256).

//go:embed ui
var uiFiles embed.FS

const (
	uiPrefix = "/debug/"

	// uiCSP allows the page's own files and nothing else: no inline script
	// or style, no other origin, no framing, no form posts. img-src data:
	// is for data: URLs a stylesheet may use; connect-src 'self' is the API.
	uiCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
		"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)

// uiAsset is one embedded file, ready to serve.
type uiAsset struct {
	body        []byte
	contentType string
	etag        string // strong validator: the content's sha256
}

var (
	uiOnce   sync.Once
	uiAssets map[string]*uiAsset // by path under ui/, "index.html", "views/overview.js" ...
)

// loadUI reads every embedded file once. A file whose type the server does
// not know is not served at all, so nothing is ever sniffed.
func loadUI() {
	uiAssets = map[string]*uiAsset{}
	err := fs.WalkDir(uiFiles, "ui", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct := uiContentType(p)
		if ct == "" {
			return nil
		}
		body, err := uiFiles.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		uiAssets[strings.TrimPrefix(p, "ui/")] = &uiAsset{
			body:        body,
			contentType: ct,
			etag:        `"` + hex.EncodeToString(sum[:16]) + `"`,
		}
		return nil
	})
	if err != nil {
		panic("diaghttp: reading the embedded UI: " + err.Error()) // a broken build, not a runtime condition
	}
}

// uiContentType is the Content-Type of an embedded file by its name; ""
// for types the UI does not use.
func uiContentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case "":
		if b := path.Base(p); b == "LICENSE" || b == "VERSION" {
			return "text/plain; charset=utf-8"
		}
	}
	return ""
}

// ui serves /debug (a redirect), /debug/ (index.html) and /debug/<asset>.
// /debug/api/* never reaches it (handle routes that prefix first).
//
// Caching: every response says Cache-Control: no-cache with a strong ETag,
// so the browser revalidates each file on use and gets 304 while it is
// unchanged; after an upgrade the ETag differs and the new file is served.
// The files are small, so one conditional request per file is cheap, and
// the page can never run a stale mix of old and new modules.
func (s *Server) ui(ctx *fasthttp.RequestCtx, p string) {
	h := &ctx.Response.Header
	if p == "/debug" {
		h.Set(fasthttp.HeaderLocation, uiPrefix)
		h.Set(fasthttp.HeaderCacheControl, "no-cache")
		ctx.SetStatusCode(fasthttp.StatusMovedPermanently)
		return
	}
	name := strings.TrimPrefix(p, uiPrefix)
	if name == "" {
		name = "index.html"
	}
	uiOnce.Do(loadUI)
	a := uiAssets[name]
	if a == nil {
		jsonError(ctx, fasthttp.StatusNotFound, "not found")
		return
	}
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set(fasthttp.HeaderCacheControl, "no-cache")
	h.Set(fasthttp.HeaderETag, a.etag)
	if etagMatch(ctx.Request.Header.Peek(fasthttp.HeaderIfNoneMatch), a.etag) {
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	ctx.SetContentType(a.contentType)
	ctx.SetBody(a.body)
}

// etagMatch reports whether an If-None-Match header lists etag (or "*").
// Weak comparison, as RFC 9110 asks for If-None-Match.
func etagMatch(hdr []byte, etag string) bool {
	for _, t := range strings.Split(string(hdr), ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}
