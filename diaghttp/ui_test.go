package diaghttp_test

import (
	"archive/zip"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/redis/go-redis/v9"

	"github.com/svcdb/svcdb/core/redistest"
)

// Tests of the debug UI (/debug/): how the files are served (no browser),
// and the page itself in headless Chromium against the real svcdb binary
// under load. Chromium comes from the Debian package chromium (make deps);
// without it the browser tests fail under CI=true and are skipped otherwise.
//
// Screenshots of every view go to the test's temporary directory (or to
// SVC_SCREENSHOT_DIR when set, to keep them); with SVC_UPDATE_SCREENSHOTS=1
// one 1280x800 screenshot per view is also written to docs/images/.

// The exact policy of SPEC Part B: no inline script or style, nothing from
// another origin.
var wantCSP = []string{
	"default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
	"connect-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
}

// rawGet does one request without following redirects.
func rawGet(t *testing.T, method, u string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

var (
	htmlRefRE   = regexp.MustCompile(`(?:src|href)="([^"#:]+)"`)
	jsImportRE  = regexp.MustCompile(`(?m)^\s*import\s+(?:[^'"]*?\s+from\s+)?'([^']+)'`)
	inlineRE    = regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|<style|\sstyle=|\son[a-z]+=|javascript:`)
	htmlSinksRE = regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function\(|setAttribute\(\s*['"]style`)
)

// TestDebugUIServing: /debug/ and every file the page loads (found by
// following index.html and the modules' imports) are public, with the
// right Content-Type, the strict CSP, nosniff, DENY and revalidated
// caching; the markup has no inline script, style or handler, and no script
// has an HTML sink.
func TestDebugUIServing(t *testing.T) {
	f := start(t, apiToken)

	res, _ := rawGet(t, "GET", f.base+"/debug", nil)
	if res.StatusCode != http.StatusMovedPermanently || res.Header.Get("Location") != "/debug/" {
		t.Fatalf("/debug: %d Location %q, want 301 to /debug/", res.StatusCode, res.Header.Get("Location"))
	}

	want := map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
	seen := map[string]bool{}
	queue := []string{"/debug/"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		res, body := rawGet(t, "GET", f.base+p, nil) // no token: the UI is public
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", p, res.StatusCode, body)
		}
		ext := path.Ext(p)
		if p == "/debug/" {
			ext = ".html"
		}
		h := res.Header
		if ct := h.Get("Content-Type"); ct != want[ext] {
			t.Errorf("%s: Content-Type %q, want %q", p, ct, want[ext])
		}
		csp := strings.Split(h.Get("Content-Security-Policy"), ";")
		for i := range csp {
			csp[i] = strings.TrimSpace(csp[i])
		}
		if !slices.Equal(csp, wantCSP) {
			t.Errorf("%s: Content-Security-Policy %q", p, h.Get("Content-Security-Policy"))
		}
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: hygiene headers %v", p, h)
		}
		etag := h.Get("ETag")
		if h.Get("Cache-Control") != "no-cache" || !strings.HasPrefix(etag, `"`) {
			t.Errorf("%s: Cache-Control %q ETag %q: want no-cache with a strong ETag", p, h.Get("Cache-Control"), etag)
		}
		if r304, b := rawGet(t, "GET", f.base+p, map[string]string{"If-None-Match": etag}); r304.StatusCode != http.StatusNotModified || b != "" {
			t.Errorf("%s with If-None-Match %s: %d %q, want 304 and no body", p, etag, r304.StatusCode, b)
		}
		if r, b := rawGet(t, "GET", f.base+p, map[string]string{"If-None-Match": `"stale"`}); r.StatusCode != 200 || b != body {
			t.Errorf("%s with a stale ETag: %d", p, r.StatusCode)
		}

		var refs [][]string
		switch ext {
		case ".html":
			if m := inlineRE.FindString(body); m != "" {
				t.Errorf("%s has inline script, style or handler: %q", p, m)
			}
			refs = htmlRefRE.FindAllStringSubmatch(body, -1)
		case ".js":
			if m := htmlSinksRE.FindString(body); m != "" {
				t.Errorf("%s uses %q: server strings must go through text nodes", p, m)
			}
			refs = jsImportRE.FindAllStringSubmatch(body, -1)
		}
		dir := p
		if !strings.HasSuffix(dir, "/") {
			dir = path.Dir(dir) + "/"
		}
		for _, m := range refs {
			queue = append(queue, path.Clean(dir+m[1]))
		}
	}
	for _, must := range []string{"/debug/app.js", "/debug/style.css", "/debug/vendor/uplot/uPlot.esm.js",
		"/debug/vendor/uplot/uPlot.min.css", "/debug/views/overview.js", "/debug/views/clients.js"} {
		if !seen[must] {
			t.Errorf("%s is not reachable from index.html (seen %v)", must, seen)
		}
	}

	// uPlot's licence and provenance are served as text, and agree with
	// the vendored file's own header.
	_, lib := rawGet(t, "GET", f.base+"/debug/vendor/uplot/uPlot.esm.js", nil)
	res, version := rawGet(t, "GET", f.base+"/debug/vendor/uplot/VERSION", nil)
	m := regexp.MustCompile(`\(v(\d+\.\d+\.\d+)\)`).FindStringSubmatch(lib)
	if res.Header.Get("Content-Type") != "text/plain; charset=utf-8" || m == nil ||
		!strings.Contains(version, "uPlot "+m[1]) || !strings.Contains(version, "uplot-"+m[1]+".tgz") ||
		!regexp.MustCompile(`tarball sha256: [0-9a-f]{64}`).MatchString(version) {
		t.Errorf("VERSION does not record uPlot %v with its tarball and sha256:\n%s", m, version)
	}
	if res, lic := rawGet(t, "GET", f.base+"/debug/vendor/uplot/LICENSE", nil); res.StatusCode != 200 || !strings.Contains(lic, "MIT License") {
		t.Errorf("uPlot LICENSE: %d %.80q", res.StatusCode, lic)
	}

	// HEAD works and has no body; other methods and unknown files are the
	// server's usual JSON errors; the API under /debug/ is still guarded.
	if res, b := rawGet(t, "HEAD", f.base+"/debug/", nil); res.StatusCode != 200 || b != "" {
		t.Errorf("HEAD /debug/: %d %q", res.StatusCode, b)
	}
	expect(t, f.do(t, "POST", "/debug/", nil), 405, `{"error":"method not allowed"}`)
	for _, p := range []string{"/debug/nope.js", "/debug/views/", "/debug/vendor/uplot/", "/debug/views/../../metrics.js", "/debug/.hidden", "/debug/api"} {
		expect(t, f.do(t, "GET", p, nil), 404, `{"error":"not found"}`)
	}
	expect(t, f.do(t, "GET", "/debug/api/ping", nil), 401, `{"error":"unauthorized"}`)
}

// ---- the browser ------------------------------------------------------------

func chromiumPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium not found (install the Debian package chromium: make deps)")
		}
		t.Skip("chromium not found; set CI=true to make this a failure")
	}
	return p
}

// newBrowser starts headless Chromium at 1280x800 and returns a tab's
// context. Running as root (containers) needs --no-sandbox.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("lang", "en-US"),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Do starts the browser, with no deadline. The viewport is
	// set too: the window's size includes no browser chrome headless, but
	// an explicit viewport makes the screenshots exactly 1280x800.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// page is one tab on the UI, watching for what must never happen: a
// JavaScript dialog (an injected alert), an uncaught exception, a console
// error or a browser-log error such as a CSP violation. Network errors
// (the expected 401 of a wrong token) are not counted.
type uiPage struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string

	mu       sync.Mutex
	problems []string
	requests []string // paths of the page's requests, in order
}

func openUI(t *testing.T, ctx context.Context, base, shots string) *uiPage {
	p := &uiPage{t: t, ctx: ctx, base: base, shots: shots}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	console := chromedp.Console(ctx)
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			p.problem("JavaScript dialog: " + ev.Message)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.Source == "network" || (m.Type != chromedp.ConsoleError && m.Type != chromedp.ConsoleException && m.Source != "security") {
				continue
			}
			p.problem(m.String() + " at " + m.URL)
		}
	}()
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			if u, err := url.Parse(ev.Request.URL); err == nil {
				p.mu.Lock()
				p.requests = append(p.requests, u.Path)
				p.mu.Unlock()
			}
		}
	}()
	return p
}

func (p *uiPage) problem(s string) {
	p.mu.Lock()
	p.problems = append(p.problems, s)
	p.mu.Unlock()
}

// checkClean fails the test for every dialog, exception or console error.
func (p *uiPage) checkClean() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.problems {
		p.t.Errorf("browser: %s", s)
	}
	p.problems = nil
}

func (p *uiPage) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v\n%s", what, err, p.state())
	}
}

// wait polls a JavaScript expression until it is truthy.
func (p *uiPage) wait(what, expr string, timeout time.Duration) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(100*time.Millisecond)))
	if err != nil {
		p.t.Fatalf("waiting for %s (%s): %v\n%s", what, expr, err, p.state())
	}
}

func eval[T any](p *uiPage, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// state is what the page shows, for failure messages.
func (p *uiPage) state() string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`location.href + "\n" + document.getElementById("conn-status").textContent + "\n" + document.body.innerText.slice(0, 3000)`))
	if err != nil {
		return "(page state unavailable: " + err.Error() + ")"
	}
	return "page:\n" + s
}

// text is the visible text of an element.
func (p *uiPage) text(sel string) string {
	p.t.Helper()
	return eval[string](p, `(document.querySelector(`+strconv.Quote(sel)+`)||{innerText:""}).innerText`)
}

// screenshot saves the viewport as name.png; docsName, when set, is also
// written to docs/images/ under SVC_UPDATE_SCREENSHOTS=1.
func (p *uiPage) screenshot(name, docsName string) {
	p.t.Helper()
	// Let charts and tables settle, away from any hover or focus state.
	p.do("moving the mouse away", chromedp.MouseEvent("mouseMoved", 1, 1),
		chromedp.Evaluate[chromedp.Void](`document.activeElement && document.activeElement.blur()`))
	time.Sleep(400 * time.Millisecond)
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(p.shots, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	if docsName != "" && os.Getenv("SVC_UPDATE_SCREENSHOTS") == "1" {
		if err := os.WriteFile(filepath.Join("..", "docs", "images", docsName), png, 0o644); err != nil {
			p.t.Fatal(err)
		}
	}
}

// open shows a view by clicking its tab, and waits for its section.
func (p *uiPage) open(view string) {
	p.t.Helper()
	p.do("opening "+view,
		chromedp.Click(chromedp.CSS(`#nav a[data-view="`+view+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("#view-"+view)))
	p.wait(view+" marked current", `document.querySelector('#nav a[aria-current="page"]').dataset.view === "`+view+`"`, 5*time.Second)
}

// requestsSince returns the API paths requested after mark.
func (p *uiPage) requestsSince(mark int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.requests[mark:] {
		if strings.HasPrefix(r, "/debug/api/") || r == "/status/json" {
			out = append(out, r)
		}
	}
	return out
}

func (p *uiPage) requestMark() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}

// ---- the server -------------------------------------------------------------

// svcdbProcess is the real binary with its diagnostics on, started in a
// temporary directory (its data and bundles stay there).
type svcdbProcess struct {
	redis, http string
	out         *lockedLines
}

type lockedLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLines) add(s string) {
	l.mu.Lock()
	l.b.WriteString(s + "\n")
	l.mu.Unlock()
}

func (l *lockedLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startSvcdb(t *testing.T, token string, args ...string) *svcdbProcess {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "svcdb")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/svcdb").CombinedOutput(); err != nil {
		t.Fatalf("go build ../cmd/svcdb: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"--port", "0", "--http-port", "0"}, args...)...)
	cmd.Dir = dir
	// svcdb refuses unknown SVC_* variables, such as this test's own
	// SVC_UPDATE_SCREENSHOTS: pass none but the token.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SVC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "SVC_HTTP_TOKEN="+token)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedLines
	cmd.Stderr = writerFunc(func(b []byte) (int, error) { stderr.add(string(b)); return len(b), nil })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	p := &svcdbProcess{out: &lockedLines{}}
	ready := make(chan struct{})
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		httpRE := regexp.MustCompile(`diagnostics on (http://\S+)`)
		redisRE := regexp.MustCompile(`listening on (\S+)`)
		sc := bufio.NewScanner(stdout)
		var once sync.Once
		for sc.Scan() {
			line := sc.Text()
			p.out.add(line)
			if m := httpRE.FindStringSubmatch(line); m != nil && p.http == "" {
				p.http = m[1]
			} else if m := redisRE.FindStringSubmatch(line); m != nil && p.redis == "" {
				p.redis = m[1]
				once.Do(func() { close(ready) })
			}
		}
	}()
	select {
	case <-ready:
	case <-eof:
		t.Fatalf("svcdb exited\nstdout:\n%s\nstderr:\n%s", p.out, &stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("svcdb did not start\nstdout:\n%s\nstderr:\n%s", p.out, &stderr)
	}
	if p.http == "" {
		t.Fatalf("no diagnostics address in the output:\n%s", p.out)
	}
	return p
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// xssName is a client name that runs script if a page inserts it as HTML.
// CLIENT SETNAME allows only '!'..'~' (no spaces), as Redis does, hence the
// slashes for attribute separators.
const (
	xssName    = `<img/src=x/onerror=alert(1)>`
	xssLibName = `<script>alert(2)</script>`
)

// load drives traffic with go-redis until the test ends: reads and writes
// over many keys, some misses and TTLs, and one hash tag hammered so that
// its shard is hot.
func load(t *testing.T, addr string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 4})
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var failed sync.Once
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				pipe := rdb.Pipeline()
				for j := range 10 {
					k := fmt.Sprintf("key:%d:%d", w, (i*10+j)%2000)
					pipe.Set(ctx, k, "value-"+strconv.Itoa(i), 0)
					pipe.Get(ctx, k)
				}
				pipe.Get(ctx, fmt.Sprintf("missing:%d", i))
				pipe.Set(ctx, fmt.Sprintf("ttl:%d:%d", w, i%500), "v", time.Minute)
				pipe.LPush(ctx, fmt.Sprintf("list:%d", w), i)
				pipe.LTrim(ctx, fmt.Sprintf("list:%d", w), 0, 99)
				for range 30 {
					pipe.Incr(ctx, "{hot}counter")
				}
				if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) && ctx.Err() == nil {
					failed.Do(func() { t.Errorf("load: %v", err) })
				}
				time.Sleep(3 * time.Millisecond)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		wg.Wait()
		rdb.Close()
	})
}

// TestDebugUIBrowser drives the UI in headless Chromium against the real
// binary under load: the wrong-token message, sign-in, every view with real
// values, polling of the active view only and only while visible, a bundle
// generated and downloaded, hostile client strings shown as text, the
// session-expired message, a phone-sized layout; and no dialog, exception,
// console error or CSP violation throughout.
func TestDebugUIBrowser(t *testing.T) {
	ctx := newBrowser(t)
	const token = "ui-t0ken-7f3a9c"
	srv := startSvcdb(t, token, "--shards", "4", "--event-loops", "2", "--enable-debug-command", "yes") // DEBUG SLEEP below

	admin := redis.NewClient(&redis.Options{Addr: srv.redis, PoolSize: 1})
	defer admin.Close()
	bg := context.Background()
	for _, kv := range [][2]string{{"slowlog-log-slower-than", "5000"}, {"latency-monitor-threshold", "5"}} {
		if err := admin.ConfigSet(bg, kv[0], kv[1]).Err(); err != nil {
			t.Fatalf("CONFIG SET %s: %v", kv[0], err)
		}
	}
	// The hostile client: its name and library name are HTML, and its slow
	// commands put its name in the slow log too.
	hostile := redis.NewClient(&redis.Options{Addr: srv.redis, PoolSize: 1, ClientName: xssName})
	defer hostile.Close()
	if err := hostile.Do(bg, "CLIENT", "SETINFO", "LIB-NAME", xssLibName).Err(); err != nil {
		t.Fatalf("CLIENT SETINFO: %v", err)
	}
	for range 2 {
		if err := hostile.Do(bg, "DEBUG", "SLEEP", "0.02").Err(); err != nil {
			t.Fatalf("DEBUG SLEEP: %v", err)
		}
	}
	// A slow-ish script whose source is HTML: the Performance view lists
	// it among the slow scripts, as text.
	if err := admin.Eval(bg, "-- "+xssName+"\nlocal i = 0 while i < 300000 do i = i + 1 end return i", nil).Err(); err != nil {
		t.Fatalf("EVAL: %v", err)
	}
	load(t, srv.redis)

	shots := os.Getenv("SVC_SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	updateDocs := os.Getenv("SVC_UPDATE_SCREENSHOTS") == "1"

	p := openUI(t, ctx, srv.http, shots)
	defer p.checkClean()

	t.Run("wrong token", func(t *testing.T) {
		p.t = t
		p.do("loading /debug", chromedp.Navigate(srv.http+"/debug"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
		if loc := eval[string](p, "location.pathname"); loc != "/debug/" {
			t.Errorf("/debug led to %q, want /debug/", loc)
		}
		p.do("signing in with a wrong token",
			chromedp.SendKeys(chromedp.CSS("#token"), "not-the-token"),
			chromedp.Click(chromedp.CSS(`#login-form button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS("#login-msg")))
		msg := p.text("#login-msg")
		for _, want := range []string{"did not accept this token", "401", "SVC_HTTP_TOKEN", "--http-token"} {
			if !strings.Contains(msg, want) {
				t.Errorf("wrong-token message %q lacks %q", msg, want)
			}
		}
		if eval[bool](p, `!sessionStorage.getItem("svcdb.debug.token") && !document.getElementById("login").hidden && document.getElementById("nav").hidden`) == false {
			t.Error("a rejected token was kept, or the views were shown")
		}
		p.screenshot("login-wrong-token", "")
	})

	signedIn := t.Run("sign in", func(t *testing.T) {
		p.t = t
		if v := eval[string](p, `document.getElementById("token").value`); v != "" {
			t.Errorf("the rejected token is still in the field: %q", v)
		}
		p.do("signing in with the keyboard",
			chromedp.SendKeys(chromedp.CSS("#token"), token+"\r"), // Enter submits
			chromedp.WaitVisible(chromedp.CSS("#nav")),
			chromedp.WaitVisible(chromedp.CSS("#view-overview")))
		if got := eval[string](p, `sessionStorage.getItem("svcdb.debug.token")`); got != token {
			t.Errorf("sessionStorage token %q", got)
		}
		if eval[bool](p, `localStorage.length === 0 && document.cookie === ""`) == false {
			t.Error("the token leaked into localStorage or a cookie")
		}
	})

	if !signedIn {
		return // every view needs it
	}
	num := func(sel string) string { // the first number shown in sel, "" if none
		return regexp.MustCompile(`[0-9][0-9,.]*`).FindString(p.text(sel))
	}

	t.Run("overview", func(t *testing.T) {
		p.t = t
		points := 5
		if updateDocs {
			points = 120 // two minutes of history in the docs' charts
		}
		p.wait("throughput and charts", `(() => {
			const v = document.getElementById("ov-ops").textContent;
			return /[1-9]/.test(v) && document.querySelectorAll("#view-overview figure.chart canvas").length === 4 &&
				[...document.querySelectorAll("#view-overview figure.chart")].every(f => +f.dataset.points >= `+strconv.Itoa(points)+`);
		})()`, time.Duration(points+20)*time.Second)
		p.wait("server info", `document.getElementById("ov-info").innerText.includes("Node id") && document.getElementById("ov-health").innerText.includes("healthy")`, 10*time.Second)
		if n, _ := strconv.Atoi(num("#ov-clients")); n < 2 {
			t.Errorf("connected clients %q, want at least 2 (load and admin)", p.text("#ov-clients"))
		}
		if !strings.Contains(p.text("#ov-memory"), "B") || num("#ov-keys") == "" || num("#ov-keys") == "0" {
			t.Errorf("memory %q keys %q", p.text("#ov-memory"), p.text("#ov-keys"))
		}
		info := p.text("#ov-info")
		for _, want := range []string{srv.redis, "run-to-completion", "4 · 2"} {
			if !strings.Contains(info, want) {
				t.Errorf("server info lacks %q:\n%s", want, info)
			}
		}
		if top := p.text("#view-overview table.data tbody"); !strings.Contains(top, "incr") || !strings.Contains(top, "set") {
			t.Errorf("busiest commands lack incr and set:\n%s", top)
		}
		if h := p.text("#server-health"); !strings.EqualFold(h, "healthy") {
			t.Errorf("header health %q", h)
		}
		p.screenshot("overview", "ui-overview.png")
	})

	t.Run("performance", func(t *testing.T) {
		p.t = t
		// Keyboard navigation: focus the tab and press Enter.
		p.do("opening Performance with the keyboard",
			chromedp.Focus(chromedp.CSS(`#nav a[data-view="performance"]`)),
			chromedp.KeyEvent(kb.Enter),
			chromedp.WaitVisible(chromedp.CSS("#view-performance")))
		p.wait("latency, slow log, events and hot shards", `(() => {
			const q = (s) => document.querySelectorAll(s).length;
			return q('#perf-latency tr[data-key="set"]') && q('#perf-latency tr[data-key="incr"]') &&
				q('#perf-slowlog tbody tr[data-key]') && q('#perf-events tr[data-key="command"]') &&
				q('#perf-hot tbody tr[data-key]') === 4 && document.getElementById("perf-hot").innerText.includes("HOT");
		})()`, 30*time.Second)
		p.wait("the slow scripts", `document.querySelectorAll('#perf-scripts tbody tr[data-key^="eval:"]').length > 0`, 15*time.Second)
		if scripts := p.text("#perf-scripts"); !strings.Contains(scripts, "while i < 300000") || !strings.Contains(scripts, xssName) {
			t.Errorf("slow scripts lack the EVAL's source:\n%s", scripts)
		}
		set := p.text(`#perf-latency tr[data-key="set"]`)
		if !regexp.MustCompile(`\d+(\.\d+)? (µs|ms)`).MatchString(set) {
			t.Errorf("set latency row without durations: %q", set)
		}
		slow := p.text("#perf-slowlog")
		if !strings.Contains(strings.ToLower(slow), "debug sleep 0.02") || !strings.Contains(slow, xssName) {
			t.Errorf("slow log lacks DEBUG SLEEP from %s:\n%s", xssName, slow)
		}
		if eval[int](p, `document.querySelectorAll("#view-performance img, #view-performance script").length`) != 0 {
			t.Error("the slow log's client name became markup")
		}
		p.screenshot("performance", "ui-performance.png")
	})

	t.Run("cluster", func(t *testing.T) {
		p.t = t
		p.open("cluster")
		p.wait("the node and its shards", `document.querySelectorAll("#cl-shards tbody tr[data-key]").length === 4 &&
			document.getElementById("cl-nodes").innerText.includes("online")`, 15*time.Second)
		nodes := p.text("#cl-nodes")
		for _, want := range []string{srv.redis, "master", "0-16383", "this node"} {
			if !strings.Contains(nodes, want) {
				t.Errorf("nodes table lacks %q:\n%s", want, nodes)
			}
		}
		if s := p.text("#cl-summary"); !strings.Contains(s, "standalone") {
			t.Errorf("topology: %s", s)
		}
		clusterReplication(t, p, srv.redis)
		p.screenshot("cluster", "ui-cluster.png")
	})

	t.Run("configuration", func(t *testing.T) {
		p.t = t
		p.open("config")
		p.wait("the parameters", `document.querySelectorAll('#cfg-table tr[data-key="maxclients"], #cfg-table tr[data-key="http-token"]').length === 2`, 15*time.Second)
		slow := p.text(`#cfg-table tr[data-key="slowlog-log-slower-than"]`)
		if !strings.Contains(slow, "5000") || !strings.Contains(slow, "10000") || !strings.Contains(slow, "runtime") || !strings.Contains(slow, "CONFIG SET") {
			t.Errorf("slowlog-log-slower-than row: %q (want value 5000, default 10000, source runtime, mutable)", slow)
		}
		if tok := p.text(`#cfg-table tr[data-key="http-token"]`); !strings.Contains(tok, "(redacted)") || !strings.Contains(tok, "env") {
			t.Errorf("http-token row: %q", tok)
		}
		if strings.Contains(eval[string](p, "document.body.innerText"), token) {
			t.Error("the token is shown on the page")
		}
		p.do("filtering", chromedp.SendKeys(chromedp.CSS("#cfg-filter"), "slowlog"))
		p.wait("the filter", `[...document.querySelectorAll("#cfg-table tbody tr")].every(r => r.innerText.toLowerCase().includes("slowlog"))`, 5*time.Second)
		p.do("clearing the filter", chromedp.Evaluate[chromedp.Void](
			`const f = document.getElementById("cfg-filter"); f.value = ""; f.dispatchEvent(new Event("input"))`))
		p.screenshot("configuration", "ui-configuration.png")
	})

	t.Run("bundles", func(t *testing.T) {
		p.t = t
		downloads := t.TempDir()
		p.do("allowing downloads", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: downloads, EventsEnabled: new(true),
			})
			return err
		}))
		p.open("bundles")
		name, file := p.download(downloads, func() {
			p.do("generating a bundle with a 1 s profile",
				chromedp.SetValue(chromedp.CSS("#bundle-duration"), "1"),
				chromedp.Click(chromedp.CSS("#bundle-generate")))
		})
		p.wait("the bundle's message", `!document.getElementById("bundle-status").hidden && !document.getElementById("bundle-generate").disabled`, 10*time.Second)
		status := p.text("#bundle-status")
		id := regexp.MustCompile(`[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}`).FindString(status)
		if id == "" {
			t.Fatalf("no bundle id in %q", status)
		}
		if name != "svcdb-bundle-"+id+".zip" {
			t.Errorf("download named %q, want svcdb-bundle-%s.zip", name, id)
		}
		checkZip(t, file, token)
		p.wait("the bundle in the list", `!!document.querySelector('#bundle-list tr[data-key="`+id+`"]')`, 15*time.Second)
		p.screenshot("bundles", "ui-bundles.png")

		name, file = p.download(downloads, func() {
			p.do("downloading it from the list", chromedp.Click(chromedp.CSS(`#bundle-list tr[data-key="`+id+`"] button`)))
		})
		if name != "svcdb-bundle-"+id+".zip" {
			t.Errorf("download from the list named %q", name)
		}
		checkZip(t, file, token)
	})

	t.Run("users", func(t *testing.T) {
		p.t = t
		if err := admin.Do(bg, "ACL", "SETUSER", "ui-reader", "on", ">ui-reader-pass", "~app:*", "+@read").Err(); err != nil {
			t.Fatalf("ACL SETUSER: %v", err)
		}
		p.open("users")
		p.wait("the users", `document.querySelectorAll("#users-table tbody tr[data-key]").length >= 2`, 15*time.Second)
		table := p.text("#users-table")
		for _, want := range []string{"ui-reader", "on ~app:* resetchannels -@all +@read", "1 password", "default", "+@all"} {
			if !strings.Contains(table, want) {
				t.Errorf("the users table lacks %q:\n%s", want, table)
			}
		}
		hash := sha256.Sum256([]byte("ui-reader-pass"))
		if page := eval[string](p, `document.body.innerHTML`); strings.Contains(page, hex.EncodeToString(hash[:])) || strings.Contains(page, "ui-reader-pass") {
			t.Error("the page shows a password or its hash")
		}
		if c := p.text("#users-count"); !strings.Contains(c, "users") {
			t.Errorf("count: %q", c)
		}
		p.screenshot("users", "")
	})

	t.Run("clients", func(t *testing.T) {
		p.t = t
		p.open("clients")
		p.wait("the clients", `document.querySelectorAll("#clients-table tbody tr[data-key]").length >= 3`, 15*time.Second)
		// The hostile strings are shown literally, as text, and made no
		// element: no img, no script, no dialog (checked at the end).
		names := eval[[]string](p, `[...document.querySelectorAll("#clients-table code.client-name")].map(e => e.textContent)`)
		if !slices.Contains(names, xssName) {
			t.Errorf("client names %q lack %q", names, xssName)
		}
		if table := p.text("#clients-table"); !strings.Contains(table, xssName) || !strings.Contains(table, xssLibName) {
			t.Errorf("the hostile name or library name is not shown literally:\n%s", table)
		}
		if n := eval[int](p, `document.querySelectorAll("#views img, #views script, #views [onerror]").length`); n != 0 {
			t.Errorf("%d elements made from client strings", n)
		}
		if c := p.text("#clients-count"); !strings.Contains(c, "connected") {
			t.Errorf("count: %q", c)
		}
		lib := p.text(`#clients-table tbody tr:not(.empty)`)
		if lib == "" {
			t.Error("no client rows")
		}
		p.screenshot("clients", "ui-clients.png")
	})

	t.Run("client states and keyspace events", func(t *testing.T) {
		p.t = t
		// A client blocked in BLPOP shows the blocked state.
		blocker := redis.NewClient(&redis.Options{Addr: srv.redis, PoolSize: 1, ClientName: "ui-blocked"})
		defer blocker.Close()
		blocked := make(chan error, 1)
		go func() { blocked <- blocker.BLPop(context.Background(), 0, "ui:nolist").Err() }()
		p.wait("the blocked state", `[...document.querySelectorAll("#clients-table tbody tr")].some(r => r.textContent.includes("ui-blocked") && r.querySelector(".client-state").textContent.includes("blocked"))`, 15*time.Second)
		if err := admin.LPush(context.Background(), "ui:nolist", "x").Err(); err != nil {
			t.Fatal(err)
		}
		if err := <-blocked; err != nil {
			t.Errorf("BLPOP: %v", err)
		}
		// The panel watches the load's LPUSH events for a bounded time.
		if err := admin.ConfigSet(context.Background(), "notify-keyspace-events", "El").Err(); err != nil {
			t.Fatal(err)
		}
		defer admin.ConfigSet(context.Background(), "notify-keyspace-events", "")
		p.do("watching events", chromedp.Evaluate[chromedp.Void](`document.getElementById("ev-pattern").value = "__keyevent@0__:lpush"`),
			chromedp.Click(chromedp.CSS("#ev-watch")))
		p.wait("the events", `document.querySelectorAll("#ev-list li").length > 0 && !document.getElementById("ev-watch").disabled`, 20*time.Second)
		if l := p.text("#ev-list"); !strings.Contains(l, "__keyevent@0__:lpush") || !strings.Contains(l, "list:") {
			t.Errorf("events: %q", l)
		}
		if st := p.text("#ev-status"); !strings.Contains(st, "event") || !strings.Contains(st, "notify-keyspace-events lE") {
			t.Errorf("status: %q", st)
		}
		p.screenshot("keyspace-events", "")
	})

	t.Run("polls only the active view while visible", func(t *testing.T) {
		p.t = t
		// Clients is active: in 4 s (two of its 2 s periods) it polls
		// clients, and nothing else.
		mark := p.requestMark()
		time.Sleep(4 * time.Second)
		reqs := p.requestsSince(mark)
		if !slices.Contains(reqs, "/debug/api/clients") {
			t.Errorf("the clients view did not poll: %v", reqs)
		}
		for _, r := range reqs {
			if r != "/debug/api/clients" {
				t.Errorf("the clients view requested %s", r)
			}
		}
		// A hidden tab polls nothing, and says so; visible again, it resumes.
		p.do("hiding the tab", chromedp.Evaluate[chromedp.Void](`
			Object.defineProperty(document, "visibilityState", {configurable: true, get: () => "hidden"});
			document.dispatchEvent(new Event("visibilitychange"));`))
		if c := p.text("#conn-status"); !strings.Contains(c, "Paused") {
			t.Errorf("hidden tab status %q", c)
		}
		time.Sleep(500 * time.Millisecond) // events of a request that was already under way
		mark = p.requestMark()
		time.Sleep(4 * time.Second)
		if reqs := p.requestsSince(mark); len(reqs) > 0 {
			t.Errorf("a hidden tab polled %v", reqs)
		}
		mark = p.requestMark()
		p.do("showing the tab", chromedp.Evaluate[chromedp.Void](`
			delete document.visibilityState;
			document.dispatchEvent(new Event("visibilitychange"));`))
		p.wait("polling to resume", `document.getElementById("conn-status").textContent.startsWith("Live")`, 10*time.Second)
		for deadline := time.Now().Add(10 * time.Second); !slices.Contains(p.requestsSince(mark), "/debug/api/clients"); {
			if time.Now().After(deadline) {
				t.Fatalf("polling did not resume: %v", p.requestsSince(mark))
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("phone layout", func(t *testing.T) {
		p.t = t
		p.do("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile, chromedp.EmulateScale(2)))
		for _, v := range []string{"overview", "performance", "clients", "config"} {
			p.open(v)
			time.Sleep(1500 * time.Millisecond)
			if w := eval[[]int](p, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
				t.Errorf("%s: the page is %d px wide in a %d px viewport (tables must scroll inside their box)", v, w[0], w[1])
			}
			p.screenshot("phone-"+v, "")
		}
		p.do("back to 1280x800", chromedp.EmulateViewport(1280, 800))
	})

	t.Run("expired token", func(t *testing.T) {
		p.t = t
		p.open("cluster")
		p.do("replacing the token", chromedp.Evaluate[chromedp.Void](`sessionStorage.setItem("svcdb.debug.token", "stale-token")`))
		p.wait("the sign-in form", `!document.getElementById("login").hidden && !document.getElementById("login-msg").hidden`, 15*time.Second)
		if msg := p.text("#login-msg"); !strings.Contains(msg, "no longer accepted") {
			t.Errorf("expired-token message %q", msg)
		}
		p.do("signing in again",
			chromedp.SendKeys(chromedp.CSS("#token"), token+"\r"),
			chromedp.WaitVisible(chromedp.CSS("#view-cluster")))
	})
	p.t = t
}

// clusterReplication attaches a real redis-server replica to the svcdb
// master at addr and checks the Cluster view's replication panel: the
// master with one online replica in sync, drawn as two boxes; then the
// replica stopped (SIGSTOP) until its last ACK is older than the lagging
// threshold, and the view marks it lagging (crit) until it runs again.
func clusterReplication(t *testing.T, p *uiPage, addr string) {
	t.Helper()
	_, mport, _ := net.SplitHostPort(addr)
	replica := redistest.StartServer(t, t.TempDir(), "--save", "", "--appendonly", "no", "--replicaof", "127.0.0.1", mport)
	_, rport, _ := net.SplitHostPort(replica.Addr)
	rc := redis.NewClient(&redis.Options{Addr: replica.Addr, PoolSize: 1})
	defer rc.Close()
	pid, err := strconv.Atoi(infoLine(rc.Info(context.Background(), "server").Val(), "process_id"))
	if err != nil {
		t.Fatalf("the replica's process_id: %v", err)
	}
	row := `document.querySelector('#cl-replicas tbody tr[data-key="127.0.0.1:` + rport + `"]')`
	p.wait("the replica in sync", row+`?.innerText.includes("in sync") &&
		document.querySelectorAll("#cl-repl-topo .topo-node").length === 2`, 30*time.Second)
	repl := p.text("#cl-repl")
	for _, want := range []string{"master", "1 attached, 1 online", "127.0.0.1:" + rport, "online", "in sync", "this node"} {
		if !strings.Contains(repl, want) {
			t.Errorf("replication panel lacks %q:\n%s", want, repl)
		}
	}
	if n := eval[int](p, `document.querySelectorAll("#cl-repl-topo .topo-node.crit, #cl-repl-topo .topo-node.warn").length`); n != 0 {
		t.Errorf("%d boxes marked as a problem while the replica is in sync:\n%s", n, repl)
	}

	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(pid, syscall.SIGCONT) }()
	p.wait("the stopped replica marked lagging", row+`?.innerText.includes("lagging") &&
		document.querySelector('#cl-repl-topo .topo-branch[data-replica="127.0.0.1:`+rport+`"] .topo-node.crit') !== null &&
		document.getElementById("cl-repl-summary").innerText.includes("1 lagging")`, 30*time.Second)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	p.wait("the replica in sync again", row+`?.innerText.includes("in sync")`, 30*time.Second)
}

// infoLine reads one field of an INFO reply.
func infoLine(info, name string) string {
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return v
		}
	}
	return ""
}

// download runs trigger and waits for the download it starts; it returns
// the file name the page suggested and the file's path (downloads are saved
// under their GUID in dir). If the page shows an error instead, that is the
// failure reported.
func (p *uiPage) download(dir string, trigger func()) (string, string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 90*time.Second)
	defer cancel()
	begins := chromedp.Events(ctx, browser.DownloadWillBegin)
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	trigger()
	failed := make(chan string, 1)
	go func() { // a failure message instead of a file ends the wait early
		for ctx.Err() == nil {
			s, err := chromedp.Run(ctx, chromedp.Evaluate[string](
				`(() => { const s = document.getElementById("bundle-status");
				  return s && !s.hidden && /failed|Another/.test(s.textContent) ? s.textContent : ""; })()`))
			if err == nil && s != "" {
				failed <- s
				cancel()
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	var name, guid string
	for ev, err := range begins {
		if err != nil {
			break
		}
		name, guid = ev.SuggestedFilename, ev.GUID
		break
	}
	if guid != "" {
		for ev, err := range progress {
			if err != nil {
				break
			}
			if ev.GUID != guid {
				continue
			}
			if ev.State == browser.DownloadProgressStateCompleted {
				return name, filepath.Join(dir, guid)
			}
			if ev.State == browser.DownloadProgressStateCanceled {
				p.t.Fatalf("download %s canceled", name)
			}
		}
	}
	select {
	case msg := <-failed:
		p.t.Fatalf("no download: the page says %q", msg)
	default:
	}
	p.t.Fatalf("no download within 90 s\n%s", p.state())
	return "", ""
}

// checkZip opens a downloaded bundle: a ZIP with a manifest, and no trace
// of the token.
func checkZip(t *testing.T, file, token string) {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatalf("the download is not a ZIP: %v", err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if strings.Contains(string(b), token) {
			t.Errorf("the bundle's %s holds the HTTP token", f.Name)
		}
	}
	if !slices.Contains(names, "manifest.json") || !slices.Contains(names, "cpu.pprof") {
		t.Errorf("bundle files %v: want manifest.json and cpu.pprof (duration 1)", names)
	}
}

// TestDebugUINoToken: with no token configured the sign-in explains how to
// set one.
func TestDebugUINoToken(t *testing.T) {
	ctx := newBrowser(t)
	f := start(t, "")
	p := openUI(t, ctx, f.base, t.TempDir())
	defer p.checkClean()
	p.do("signing in to a server without a token",
		chromedp.Navigate(f.base+"/debug/"),
		chromedp.WaitVisible(chromedp.CSS("#login-form")),
		chromedp.SendKeys(chromedp.CSS("#token"), "anything\r"),
		chromedp.WaitVisible(chromedp.CSS("#login-msg")))
	msg := p.text("#login-msg")
	for _, want := range []string{"403", "no HTTP token configured", "[http] token", "SVC_HTTP_TOKEN", "--http-token", "restart"} {
		if !strings.Contains(msg, want) {
			t.Errorf("no-token message %q lacks %q", msg, want)
		}
	}
	if eval[bool](p, `!sessionStorage.getItem("svcdb.debug.token") && document.getElementById("nav").hidden`) == false {
		t.Error("signed in against a server without a token")
	}
	p.screenshot("login-no-token", "")
}
