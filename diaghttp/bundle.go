package diaghttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/svcdb/svcdb/core/acl"
	"github.com/svcdb/svcdb/core/config"
	"github.com/svcdb/svcdb/core/status"
	"github.com/svcdb/svcdb/netloop"
)

// Diagnostic bundles (SPEC Part B "Diagnostic bundles"): one ZIP holding
// what an operator would otherwise collect by hand while something is wrong.
// The service exists whether or not the HTTP server runs (DEBUG BUNDLE uses
// it too), generates one bundle at a time, and stores bundles under
// [debug-bundle] dir, pruned by max-bundles and ttl (bundlestore.go).
//
// Nothing here is on the data path: every figure comes from the Source's
// snapshots (atomics, or control messages with a deadline), as for the JSON
// API. The only costs to the server are the ones asked for: a goroutine dump
// and a heap profile (each stops the world for a moment), and with a
// duration the CPU profiler's sampling over that window.

// BundleInfo describes one stored bundle; it is netloop's type, so Bundles
// is a netloop.BundleMaker (DEBUG BUNDLE) without netloop importing this
// package.
type BundleInfo = netloop.BundleInfo

// Bundle limits and defaults ([debug-bundle] in core/config).
const (
	// MaxBundleDuration bounds the CPU profile's and rates' window.
	MaxBundleDuration = 300 * time.Second
	DefaultMaxBundles = 10
	DefaultBundleTTL  = 24 * time.Hour

	manifestName = "manifest.json"
	// bundleWriteTimeout replaces the server's 30 s write deadline for
	// /debug/api/bundle/* responses: a bundle of a few megabytes must reach
	// a slow link too. See bundleRequestConfig.
	bundleWriteTimeout = 10 * time.Minute
	// defaultCollectTime is the Retry-After estimate of the part of a
	// generation that is not the window, until one has been measured.
	defaultCollectTime = 2 * time.Second
)

// ErrBundleDuration is returned for a duration that is not a whole number of
// seconds from 0 to 300.
var ErrBundleDuration = errors.New("duration must be a whole number of seconds from 0 to 300")

// errBundlesStopped is returned by Generate after Stop.
var errBundlesStopped = errors.New("the bundle service is stopped (the server is shutting down)")

// BusyError is Generate's error while another bundle is being generated:
// retry after RetryAfter (whole seconds, at least one).
type BusyError struct {
	RetryAfter time.Duration
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("a diagnostic bundle is already being generated; retry in %d seconds", int64(e.RetryAfter/time.Second))
}

// BundleConfig configures the bundle service.
type BundleConfig struct {
	// Dir holds the bundles; created on the first generation. cmd/svcdb
	// passes [debug-bundle] dir, or <[server] data-dir>/bundles.
	Dir string
	// MaxBundles is how many bundles are kept (the oldest are deleted
	// beyond it); 0 means DefaultMaxBundles. SetMaxBundles changes it.
	MaxBundles int
	// TTL is the age at which bundles are deleted; 0 means
	// DefaultBundleTTL. SetTTL changes it.
	TTL     time.Duration
	Version string
	Logger  *slog.Logger
	// Secrets returns the current secret values (requirepass, the HTTP
	// token). Every collector already redacts them; as a last guard, any
	// that still occurs in a text file of the bundle (a client that set one
	// as its name, a key's value in the slow log) is replaced by
	// "(redacted)" and counted in the manifest. Nil: no secrets.
	Secrets func() []string
}

// Bundles is the bundle service. Its methods are safe for concurrent use.
type Bundles struct {
	docs    docs // the JSON builders, the registry and the rate sampler
	store   *bundleStore
	log     *slog.Logger
	secrets func() []string

	maxBundles atomic.Int64
	ttl        atomic.Int64 // time.Duration

	genMu       sync.Mutex // guards the fields below; never held while generating
	busy        bool
	busyUntil   time.Time     // the running generation's expected end
	collectTime time.Duration // what the last generation took beyond its window
	stopped     bool
	gens        sync.WaitGroup // generations running

	kick      chan struct{} // sweep now (a limit changed)
	ctx       context.Context
	cancel    context.CancelFunc // Stop: ends the sweeper and any generation
	startOnce sync.Once
	started   bool // guarded by genMu
	done      chan struct{}
}

// NewBundles builds the service over src. It touches no file: the directory
// is created by the first generation. Start runs the sweeper.
func NewBundles(cfg BundleConfig, src Source) *Bundles {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Dir == "" {
		cfg.Dir = "bundles"
	}
	b := &Bundles{
		docs:        docs{src: src, version: cfg.Version, metrics: newRegistry(src, cfg.Version), rates: newRateSampler(src)},
		store:       newBundleStore(cfg.Dir),
		log:         log,
		secrets:     cfg.Secrets,
		collectTime: defaultCollectTime,
		kick:        make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.SetMaxBundles(cfg.MaxBundles)
	b.SetTTL(cfg.TTL)
	return b
}

// Dir is the bundle directory.
func (b *Bundles) Dir() string { return b.store.dir }

// SetMaxBundles changes how many bundles are kept (n <= 0: the default) and
// prunes at once if the sweeper runs. For CONFIG SET debug-bundle-max-bundles.
func (b *Bundles) SetMaxBundles(n int) {
	if n <= 0 {
		n = DefaultMaxBundles
	}
	b.maxBundles.Store(int64(n))
	b.sweepSoon()
}

// SetTTL changes the age at which bundles are deleted (d <= 0: the default)
// and sweeps at once if the sweeper runs. For CONFIG SET debug-bundle-ttl.
func (b *Bundles) SetTTL(d time.Duration) {
	if d <= 0 {
		d = DefaultBundleTTL
	}
	b.ttl.Store(int64(d))
	b.sweepSoon()
}

func (b *Bundles) sweepSoon() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// Start runs the sweeper (TTL and max-bundles, on a timer) and the
// once-per-second rate sampler the metrics document reads (shared with the
// HTTP server, see Config.Bundles). Call it once; Stop ends both.
func (b *Bundles) Start() {
	b.startOnce.Do(func() {
		b.genMu.Lock()
		if b.stopped {
			b.genMu.Unlock()
			return
		}
		b.started = true
		b.genMu.Unlock()
		go b.docs.rates.run()
		go b.sweeper()
	})
}

// Stop ends the sweeper and the sampler, cancels a generation in progress
// (its partial file is removed) and waits for all of them. Later Generate
// calls fail. Safe to call more than once, and without Start.
func (b *Bundles) Stop() {
	b.genMu.Lock()
	already := b.stopped
	b.stopped = true
	started := b.started
	b.genMu.Unlock()
	if already {
		return
	}
	b.cancel()
	b.gens.Wait()
	if started {
		b.docs.rates.halt()
		<-b.done
	}
}

// sweepInterval is a tenth of the TTL, from 1 s to 1 min: a bundle outlives
// its TTL by at most that.
func (b *Bundles) sweepInterval() time.Duration {
	return min(max(time.Duration(b.ttl.Load())/10, time.Second), time.Minute)
}

func (b *Bundles) sweeper() {
	defer close(b.done)
	b.genMu.Lock()
	if !b.busy {
		b.store.removeTemps() // left by a crash: no generation runs yet
	}
	b.genMu.Unlock()
	for {
		b.sweep(time.Now())
		t := time.NewTimer(b.sweepInterval())
		select {
		case <-b.ctx.Done():
			t.Stop()
			return
		case <-b.kick:
			t.Stop()
		case <-t.C:
		}
	}
}

// sweep deletes expired bundles and the oldest beyond max-bundles.
func (b *Bundles) sweep(now time.Time) {
	gone, errs := b.store.prune(int(b.maxBundles.Load()), time.Duration(b.ttl.Load()), now)
	if len(gone) > 0 {
		b.log.Info("diagnostic bundles deleted", "ids", gone, "max_bundles", b.maxBundles.Load(), "ttl", time.Duration(b.ttl.Load()).String())
	}
	for _, err := range errs {
		b.log.Warn("diagnostic bundle sweep", "err", err)
	}
}

// List returns the stored bundles, newest first.
func (b *Bundles) List() []BundleInfo {
	list, errs := b.store.list()
	for _, err := range errs {
		b.log.Warn("listing diagnostic bundles", "dir", b.store.dir, "err", err)
	}
	return list
}

// Open opens a stored bundle for reading: ErrBadBundleID for a malformed id
// (checked before any file access), ErrBundleNotFound for an unknown one.
// The caller closes the file.
func (b *Bundles) Open(id string) (*os.File, BundleInfo, error) {
	return b.store.open(id)
}

// acquire claims the one generation slot, or says when to retry.
func (b *Bundles) acquire(now time.Time, d time.Duration) error {
	b.genMu.Lock()
	defer b.genMu.Unlock()
	if b.stopped {
		return errBundlesStopped
	}
	if b.busy {
		wait := b.busyUntil.Sub(now)
		secs := max((wait+time.Second-1)/time.Second, 1) // whole seconds, rounded up
		return &BusyError{RetryAfter: secs * time.Second}
	}
	b.busy = true
	b.busyUntil = now.Add(d + b.collectTime)
	b.gens.Add(1)
	return nil
}

func (b *Bundles) release(collect time.Duration) {
	b.genMu.Lock()
	b.busy = false
	if collect > 0 {
		b.collectTime = collect
	}
	b.genMu.Unlock()
	b.gens.Done()
}

// Generating reports whether a bundle is being generated.
func (b *Bundles) Generating() bool {
	b.genMu.Lock()
	defer b.genMu.Unlock()
	return b.busy
}

// Generate collects a bundle, stores it and prunes the directory. With
// duration > 0 it first records a CPU profile and per-second rates for that
// long (ctx or Stop cancels it). While another generation runs it returns a
// *BusyError at once; a duration that is not whole seconds from 0 to 300
// gives ErrBundleDuration.
func (b *Bundles) Generate(ctx context.Context, duration time.Duration) (BundleInfo, error) {
	if duration < 0 || duration > MaxBundleDuration || duration%time.Second != 0 {
		return BundleInfo{}, ErrBundleDuration
	}
	start := time.Now()
	if err := b.acquire(start, duration); err != nil {
		return BundleInfo{}, err
	}
	var collect time.Duration
	defer func() { b.release(collect) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(b.ctx, cancel)()

	id := newBundleID(start)
	b.log.Info("generating a diagnostic bundle", "id", id, "duration", duration.String())
	files, err := b.collect(ctx, id, start, duration)
	if err != nil {
		b.log.Warn("diagnostic bundle not generated", "id", id, "err", err)
		return BundleInfo{}, err
	}
	info, err := b.store.write(id, files, duration)
	if err != nil {
		b.log.Error("diagnostic bundle not stored", "id", id, "dir", b.store.dir, "err", err)
		return BundleInfo{}, err
	}
	collect = time.Since(start) - duration
	b.sweep(time.Now()) // max-bundles holds at once; the new bundle is the newest
	b.log.Info("diagnostic bundle generated", "id", id, "path", info.Path, "size_bytes", info.SizeBytes,
		"duration", duration.String(), "took", time.Since(start).Round(time.Millisecond).String())
	return info, nil
}

// bundleFile is one file of a bundle.
type bundleFile struct {
	name string
	data []byte
}

// method stores profiles as they are (already gzip-compressed) and deflates
// the rest.
func (f bundleFile) method() uint16 {
	if path.Ext(f.name) == ".pprof" {
		return 0 // zip.Store
	}
	return 8 // zip.Deflate
}

// bundleManifest is manifest.json, the bundle's first file.
type bundleManifest struct {
	ID          string      `json:"id"`
	FileName    string      `json:"file_name"`
	CreatedAt   status.Time `json:"created_at"`   // generation started (the id's time)
	CompletedAt status.Time `json:"completed_at"` // files collected
	Version     string      `json:"version"`
	GoVersion   string      `json:"go_version"`
	Host        string      `json:"host"`
	PID         int         `json:"pid"`
	// DurationSecs is the window of cpu.pprof and rates.json; 0: neither
	// was asked for.
	DurationSecs int64         `json:"duration_secs"`
	CPUProfile   cpuProfileRec `json:"cpu_profile"`
	// RedactedValues counts secret values replaced by "(redacted)" in the
	// files (see BundleConfig.Secrets); each collector redacts on its own,
	// so this is normally 0.
	RedactedValues int `json:"redacted_values"`
	// Errors lists collectors that failed; their files are missing or hold
	// what could be collected. Empty when all went well.
	Errors []string       `json:"errors"`
	Files  []manifestFile `json:"files"` // every other file, in order
}

type cpuProfileRec struct {
	Included bool   `json:"included"`
	Note     string `json:"note,omitempty"` // why not, when not included
}

type manifestFile struct {
	Name      string `json:"name"`
	SizeBytes int64  `json:"size_bytes"`
	SHA256    string `json:"sha256"`
}

// collect builds every file: the window first (CPU profile and rates), then
// the snapshots, so status, metrics and rates end at the same moment.
func (b *Bundles) collect(ctx context.Context, id string, start time.Time, d time.Duration) ([]bundleFile, error) {
	src := b.docs.src
	man := bundleManifest{
		ID: id, FileName: bundleFileName(id), CreatedAt: status.At(bundleIDTime(id)),
		Version: b.docs.version, GoVersion: runtime.Version(), PID: os.Getpid(),
		DurationSecs: int64(d / time.Second), Errors: []string{},
	}
	man.Host, _ = os.Hostname()
	var files []bundleFile
	add := func(name string, data []byte) { files = append(files, bundleFile{name, data}) }
	addJSON := func(name string, v any) {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			man.Errors = append(man.Errors, name+": "+err.Error())
			return
		}
		add(name, append(data, '\n'))
	}

	var cpu, rates []byte
	if d > 0 {
		var err error
		cpu, rates, err = b.window(ctx, d, &man.CPUProfile)
		if err != nil {
			return nil, err
		}
	} else {
		man.CPUProfile.Note = "not requested (duration 0)"
	}

	now := time.Now()
	statusJSON := src.StatusJSON()
	add("status.json", statusJSON)
	add("info.txt", []byte(src.InfoText("everything")))
	addJSON("config.json", struct {
		Parameters []config.Entry `json:"parameters"`
	}{src.Config()})
	var prom bytes.Buffer
	b.docs.metrics.write(&prom)
	add("metrics.prom", prom.Bytes())
	addJSON("metrics.json", b.docs.metricsDoc(now))
	addJSON("slowlog.json", b.docs.slowlogDoc(maxSlowlogCount))
	addJSON("latency.json", b.docs.latencyDoc())
	total, clients := src.Clients(maxClientLimit)
	addJSON("clients.json", struct {
		Total   int                  `json:"total"`
		Limit   int                  `json:"limit"`
		Clients []netloop.ClientInfo `json:"clients"`
	}{total, maxClientLimit, clients})
	addJSON("users.json", struct {
		Users []acl.UserSummary `json:"users"`
	}{usersOf(src)})
	addJSON("cluster.json", b.docs.clusterDoc(now))
	if hot, err := hotShardsJSON(statusJSON); err != nil {
		man.Errors = append(man.Errors, "hotshards.json: "+err.Error())
	} else {
		add("hotshards.json", hot)
	}
	logs := src.RecentLogs(0)
	add("logs.txt", []byte(strings.Join(logs, "\n")+"\n"))
	for _, p := range []struct{ file, profile string }{{"goroutines.txt", "goroutine"}, {"heap.pprof", "heap"}} {
		var buf bytes.Buffer
		debug := 0 // the heap profile's protobuf form
		if p.profile == "goroutine" {
			debug = 2 // every goroutine's stack, as a panic prints it
		}
		if err := pprof.Lookup(p.profile).WriteTo(&buf, debug); err != nil {
			man.Errors = append(man.Errors, p.file+": "+err.Error())
			continue
		}
		add(p.file, buf.Bytes())
	}
	if cpu != nil {
		add("cpu.pprof", cpu)
	}
	if rates != nil {
		add("rates.json", rates)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bundle generation cancelled: %w", err)
	}

	man.RedactedValues = b.redact(files)
	man.CompletedAt = status.At(time.Now())
	for _, f := range files {
		sum := sha256.Sum256(f.data)
		man.Files = append(man.Files, manifestFile{f.name, int64(len(f.data)), hex.EncodeToString(sum[:])})
	}
	data, err := json.MarshalIndent(man, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return append([]bundleFile{{manifestName, append(data, '\n')}}, files...), nil
}

// window records the CPU profile and per-second rates for d. If the CPU
// profiler is already running (--cpuprofile, or a profile taken another
// way) the bundle goes without cpu.pprof and rec says why.
func (b *Bundles) window(ctx context.Context, d time.Duration, rec *cpuProfileRec) (cpu, rates []byte, err error) {
	var prof bytes.Buffer
	if perr := pprof.StartCPUProfile(&prof); perr != nil {
		rec.Note = "not included: the CPU profiler is already in use in this process (for example by --cpuprofile): " + perr.Error()
	} else {
		rec.Included = true
	}
	doc, err := b.sampleRates(ctx, d)
	if rec.Included {
		pprof.StopCPUProfile() // flushes the profile into prof
	}
	if err != nil {
		return nil, nil, err
	}
	if rec.Included {
		cpu = prof.Bytes()
	}
	rates, err = json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("rates.json: %w", err)
	}
	return cpu, append(rates, '\n'), nil
}

// ratesDoc is rates.json: the server's rates each second of the window and
// over the whole window, as /debug/api/metrics computes them.
type ratesDoc struct {
	IntervalSecs int          `json:"interval_secs"`
	DurationSecs int          `json:"duration_secs"`
	StartedAt    status.Time  `json:"started_at"`
	EndedAt      status.Time  `json:"ended_at"`
	Window       rateWindow   `json:"window"`  // first sample to last
	Samples      []rateSample `json:"samples"` // one per second, oldest first
}

// rateSample is the rates over the second that ended at At.
type rateSample struct {
	At status.Time `json:"at"`
	rateWindow
}

// sampleRates reads the totals every second for d (the same atomic loads as
// the rate sampler) and turns them into per-second rates.
func (b *Bundles) sampleRates(ctx context.Context, d time.Duration) (ratesDoc, error) {
	src := b.docs.src
	n := int(d / time.Second)
	doc := ratesDoc{IntervalSecs: 1, DurationSecs: n, Samples: make([]rateSample, 0, n)}
	var first, prev, cur rateTotals
	readTotals(src, &first, time.Now())
	prev = first
	prev.calls = slices.Clone(first.calls)
	doc.StartedAt = status.At(first.at)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for range n {
		select {
		case <-ctx.Done():
			return ratesDoc{}, fmt.Errorf("bundle generation cancelled: %w", ctx.Err())
		case now := <-t.C:
			readTotals(src, &cur, now)
			doc.Samples = append(doc.Samples, rateSample{At: status.At(now), rateWindow: rateBetween(&cur, &prev, 1, src.CommandName)})
			prev, cur = cur, prev // swap, so each keeps its own calls slice
		}
	}
	doc.EndedAt = status.At(prev.at)
	doc.Window = rateBetween(&prev, &first, n, src.CommandName)
	return doc, nil
}

// hotShardsJSON is the status document's hot_shards section (DEBUG
// HOTSHARDS' summary over the default period), indented.
func hotShardsJSON(statusJSON []byte) ([]byte, error) {
	var doc struct {
		HotShards json.RawMessage `json:"hot_shards"`
	}
	if err := json.Unmarshal(statusJSON, &doc); err != nil {
		return nil, err
	}
	if doc.HotShards == nil {
		return nil, errors.New("the status document has no hot_shards section")
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, doc.HotShards, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// redact replaces any secret left in the text files and returns how many it
// replaced. Profiles are binary (gzip): they hold function and file names,
// never values.
func (b *Bundles) redact(files []bundleFile) int {
	if b.secrets == nil {
		return 0
	}
	var forms [][]byte
	secrets := slices.Clone(b.secrets())
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) }) // a secret containing another goes first
	for _, sec := range secrets {
		if sec == "" {
			continue
		}
		// As it can appear: raw, Go-quoted (logs, INFO) and JSON-escaped,
		// with and without HTML escaping.
		quoted := strconv.Quote(sec)
		escaped, _ := json.Marshal(sec)
		var plain bytes.Buffer
		enc := json.NewEncoder(&plain)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(sec)
		for _, f := range []string{sec, unquote(quoted), unquote(string(escaped)), unquote(strings.TrimSuffix(plain.String(), "\n"))} {
			if f != "" && !slices.ContainsFunc(forms, func(g []byte) bool { return string(g) == f }) {
				forms = append(forms, []byte(f))
			}
		}
	}
	n := 0
	for i := range files {
		if path.Ext(files[i].name) == ".pprof" {
			continue
		}
		for _, f := range forms {
			if c := bytes.Count(files[i].data, f); c > 0 {
				n += c
				files[i].data = bytes.ReplaceAll(files[i].data, f, []byte(config.Redacted))
			}
		}
	}
	if n > 0 {
		b.log.Warn("secret values replaced in a diagnostic bundle", "count", n)
	}
	return n
}

// unquote drops the quotes around an encoded string.
func unquote(q string) string {
	if len(q) < 2 {
		return ""
	}
	return q[1 : len(q)-1]
}

// ---- HTTP: /debug/api/bundle/* ---------------------------------------------

// bundleRequestConfig is the HTTP server's HeaderReceived hook. fasthttp
// sets the write deadline (WriteTimeout, 30 s) only after the handler
// returns, just before writing the response, and the read deadline covers
// reading the request alone: so a 300 s generation inside the handler meets
// neither, and the ZIP is sent once complete. The download of a large
// bundle over a slow link, though, may need more than 30 s: bundle paths get
// bundleWriteTimeout instead.
func bundleRequestConfig(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if bytes.HasPrefix(h.RequestURI(), []byte(apiPrefix+"bundle/")) {
		return fasthttp.RequestConfig{WriteTimeout: bundleWriteTimeout}
	}
	return fasthttp.RequestConfig{}
}

// bundleListDoc is /debug/api/bundle/list.
type bundleListDoc struct {
	Bundles    []bundleListEntry `json:"bundles"` // newest first
	MaxBundles int64             `json:"max_bundles"`
	TTLSecs    int64             `json:"ttl_secs"`
	Generating bool              `json:"generating"` // a generation is running: generate answers 429
}

type bundleListEntry struct {
	ID           string      `json:"id"`
	FileName     string      `json:"file_name"`
	CreatedAt    status.Time `json:"created_at"`
	SizeBytes    int64       `json:"size_bytes"`
	DurationSecs int64       `json:"duration_secs"`
	Files        []string    `json:"files"`
}

// bundleAPI serves /debug/api/bundle/<rest>; handlers.go has checked the
// method and the token.
func (s *Server) bundleAPI(ctx *fasthttp.RequestCtx, rest string) {
	b := s.cfg.Bundles
	if b == nil {
		jsonError(ctx, fasthttp.StatusServiceUnavailable, "diagnostic bundles are not available in this process")
		return
	}
	switch rest {
	case "generate":
		s.bundleGenerate(ctx, b)
	case "list":
		d := bundleListDoc{Bundles: []bundleListEntry{}, MaxBundles: b.maxBundles.Load(),
			TTLSecs: int64(time.Duration(b.ttl.Load()) / time.Second), Generating: b.Generating()}
		for _, bi := range b.List() {
			files := bi.Files
			if files == nil {
				files = []string{}
			}
			d.Bundles = append(d.Bundles, bundleListEntry{ID: bi.ID, FileName: bundleFileName(bi.ID),
				CreatedAt: status.At(bi.CreatedAt), SizeBytes: bi.SizeBytes, DurationSecs: int64(bi.Duration / time.Second), Files: files})
		}
		writeAPIJSON(ctx, d)
	case "":
		jsonError(ctx, fasthttp.StatusNotFound, "not found")
	default:
		if !ValidBundleID(rest) { // before any file access
			jsonError(ctx, fasthttp.StatusBadRequest, ErrBadBundleID.Error())
			return
		}
		s.serveBundle(ctx, b, rest)
	}
}

// bundleGenerate is /debug/api/bundle/generate[?duration=N]: it generates
// the bundle, then sends it (see bundleRequestConfig on deadlines).
func (s *Server) bundleGenerate(ctx *fasthttp.RequestCtx, b *Bundles) {
	var secs int
	if args := ctx.QueryArgs(); args.Has("duration") {
		n, err := strconv.Atoi(string(args.Peek("duration")))
		if err != nil || n < 0 || time.Duration(n)*time.Second > MaxBundleDuration {
			jsonError(ctx, fasthttp.StatusBadRequest, "duration must be an integer number of seconds from 0 to "+
				strconv.Itoa(int(MaxBundleDuration/time.Second)))
			return
		}
		secs = n
	}
	// The server's shutdown (ctx.Done) cancels the generation; fasthttp's
	// RequestCtx is not used as a context beyond this handler.
	gctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shutdown := ctx.Done()
	go func() {
		select {
		case <-shutdown:
			cancel()
		case <-gctx.Done():
		}
	}()
	info, err := b.Generate(gctx, time.Duration(secs)*time.Second)
	var busy *BusyError
	switch {
	case errors.As(err, &busy):
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.FormatInt(int64(busy.RetryAfter/time.Second), 10))
		jsonError(ctx, fasthttp.StatusTooManyRequests, busy.Error())
		return
	case err != nil:
		jsonError(ctx, fasthttp.StatusInternalServerError, "generating the bundle failed: "+err.Error())
		return
	}
	s.serveBundle(ctx, b, info.ID)
}

// serveBundle sends a stored bundle as a download; id is valid.
func (s *Server) serveBundle(ctx *fasthttp.RequestCtx, b *Bundles, id string) {
	f, _, err := b.Open(id)
	switch {
	case errors.Is(err, ErrBundleNotFound):
		jsonError(ctx, fasthttp.StatusNotFound, "no such bundle")
		return
	case err != nil:
		s.log.Warn("opening a diagnostic bundle", "id", id, "err", err)
		jsonError(ctx, fasthttp.StatusInternalServerError, "the bundle cannot be read")
		return
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		jsonError(ctx, fasthttp.StatusInternalServerError, "the bundle cannot be read")
		return
	}
	h := &ctx.Response.Header
	ctx.SetContentType("application/zip")
	h.Set(fasthttp.HeaderContentDisposition, `attachment; filename="`+bundleFileName(id)+`"`)
	h.Set("X-Bundle-Id", id)
	ctx.SetBodyStream(f, int(fi.Size())) // fasthttp closes f once sent
}
