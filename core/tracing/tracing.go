package tracing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Defaults, as in SPEC.md Part B.
const (
	DefaultEndpoint    = "http://127.0.0.1:4318"
	DefaultServiceName = "svcdb"
	// ScopeName is the instrumentation scope of svcdb's spans.
	ScopeName = "github.com/svcdb/svcdb"
)

// ShardIDKey is the span attribute for the shard that ran the command.
const ShardIDKey = attribute.Key("svc.shard.id")

// Options configures New. Field names follow the [tracing] table and
// [logging] per-request-spans.
type Options struct {
	// Enabled turns tracing on; false makes New return a no-op Tracer.
	Enabled bool
	// Endpoint is the collector's base URL (http or https); "/v1/traces" is
	// appended unless the path already ends with it. Empty means
	// DefaultEndpoint.
	Endpoint string
	// SamplingRate is the fraction of new traces sampled, 0..1.
	SamplingRate float64
	// ServiceName is service.name; empty means DefaultServiceName.
	ServiceName string
	// ServiceVersion is service.version; empty leaves it out.
	ServiceVersion string
	// PerRequestSpans starts with one span per command on.
	PerRequestSpans bool
}

// Validate checks the options without creating anything, for --check-config.
func (o Options) Validate() error {
	if err := checkRate(o.SamplingRate); err != nil {
		return err
	}
	_, err := tracesURL(o.Endpoint)
	return err
}

func checkRate(r float64) error {
	if math.IsNaN(r) || r < 0 || r > 1 {
		return fmt.Errorf("tracing: sampling-rate: got %v; want a number within 0..1", r)
	}
	return nil
}

// tracesURL returns the OTLP/HTTP traces URL for a base endpoint, as the
// OTLP exporter specification does for OTEL_EXPORTER_OTLP_ENDPOINT.
func tracesURL(endpoint string) (string, error) {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", fmt.Errorf("tracing: otlp-endpoint: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("tracing: otlp-endpoint: got %q; want an http:// or https:// URL such as %s", endpoint, DefaultEndpoint)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path += "/v1/traces"
	}
	u.RawPath = ""
	return u.String(), nil
}

// Tracer makes svcdb's spans. See the package doc for its contract.
type Tracer struct {
	perRequest atomic.Bool // the one load on the command path; kept first

	enabled  bool
	provider *sdktrace.TracerProvider // nil when disabled
	tracer   trace.Tracer
	sampler  *liveSampler

	names     sync.Map // command as given → *cmdNames
	nameCount atomic.Int32
}

// New builds the Tracer. With Enabled false it returns a no-op Tracer (after
// validating the options, so a bad value is reported either way). It makes
// no network connection: the exporter connects on its first batch.
func New(ctx context.Context, o Options) (*Tracer, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := newLiveSampler(o.SamplingRate)
	if !o.Enabled {
		return &Tracer{tracer: noop.NewTracerProvider().Tracer(ScopeName), sampler: s}, nil
	}
	endpoint, _ := tracesURL(o.Endpoint)
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	name := o.ServiceName
	if name == "" {
		name = DefaultServiceName
	}
	attrs := []attribute.KeyValue{semconv.ServiceName(name)}
	if o.ServiceVersion != "" {
		attrs = append(attrs, semconv.ServiceVersion(o.ServiceVersion))
	}
	// Later detectors win: our service name and version over
	// OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME, which can still add
	// other attributes (deployment.environment.name, host.name...).
	res, err := resource.New(ctx,
		resource.WithFromEnv(),
		resource.WithTelemetrySDK(),
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(attrs...),
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	// A partial resource (a malformed OTEL_RESOURCE_ATTRIBUTES) is still used.
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(s)),
	)
	t := &Tracer{
		enabled:  true,
		provider: tp,
		tracer:   tp.Tracer(ScopeName, trace.WithInstrumentationVersion(o.ServiceVersion)),
		sampler:  s,
	}
	t.perRequest.Store(o.PerRequestSpans)
	return t, nil
}

// Enabled reports whether spans are exported at all.
func (t *Tracer) Enabled() bool { return t != nil && t.enabled }

// PerRequest reports whether each command gets a span: one atomic load. The
// command path calls it first and StartCommand only when it is true.
func (t *Tracer) PerRequest() bool { return t != nil && t.perRequest.Load() }

// SetPerRequestSpans turns per-command spans on or off for the next command
// (CONFIG SET per-request-spans). On a disabled Tracer it has no effect.
func (t *Tracer) SetPerRequestSpans(on bool) {
	if t != nil && t.enabled {
		t.perRequest.Store(on)
	}
}

// SetSamplingRate changes the fraction of new traces sampled, 0..1, for the
// next span (CONFIG SET sampling-rate). Spans with a parent follow the
// parent's decision, as ParentBased does.
func (t *Tracer) SetSamplingRate(r float64) error {
	if err := checkRate(r); err != nil {
		return err
	}
	if t != nil {
		t.sampler.set(r)
	}
	return nil
}

// SamplingRate returns the current sampling rate.
func (t *Tracer) SamplingRate() float64 {
	if t == nil {
		return 0
	}
	return t.sampler.load().rate
}

// TracerProvider returns the provider, for cmd/svcdb to install with
// otel.SetTracerProvider if other instrumentation should share it; a no-op
// provider when disabled.
func (t *Tracer) TracerProvider() trace.TracerProvider {
	if t == nil || t.provider == nil {
		return noop.NewTracerProvider()
	}
	return t.provider
}

// cmdNames caches the strings derived from a command name.
type cmdNames struct {
	span string // "svc.get", "svc.client|setname"
	op   string // "GET", "CLIENT SETNAME"
}

// maxCachedNames bounds the name cache; callers pass names from the command
// table (a few hundred), so the bound only guards against misuse.
const maxCachedNames = 4096

func (t *Tracer) namesFor(cmd string) *cmdNames {
	if v, ok := t.names.Load(cmd); ok {
		return v.(*cmdNames)
	}
	n := &cmdNames{
		span: "svc." + strings.ToLower(cmd),
		op:   strings.ToUpper(strings.ReplaceAll(cmd, "|", " ")),
	}
	if t.nameCount.Load() < maxCachedNames {
		if _, loaded := t.names.LoadOrStore(cmd, n); !loaded {
			t.nameCount.Add(1)
		}
	}
	return n
}

// dbNames are db.namespace values for the usual 16 databases.
var dbNames = func() (a [16]string) {
	for i := range a {
		a[i] = strconv.Itoa(i)
	}
	return
}()

// StartCommand starts the span for one command. cmd is the command table's
// full name (cmd.FullName: "get", "client|setname"); db the selected
// database; shard the shard that executes it, or -1 for commands that run on
// the event loop or across shards; clientAddr "ip:port". The span's
// attributes are set only when it is sampled. Call it only when PerRequest
// is true, and end the span with EndCommand.
func (t *Tracer) StartCommand(ctx context.Context, cmd string, db int, shard int, clientAddr string) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(context.Background()) // a no-op span
	}
	n := t.namesFor(cmd)
	ctx, span := t.tracer.Start(ctx, n.span, trace.WithSpanKind(trace.SpanKindServer))
	if !span.IsRecording() {
		return ctx, span
	}
	ns := ""
	if db >= 0 && db < len(dbNames) {
		ns = dbNames[db]
	} else {
		ns = strconv.Itoa(db)
	}
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs,
		semconv.DBSystemNameRedis,
		semconv.DBOperationName(n.op),
		semconv.DBNamespace(ns),
	)
	if shard >= 0 {
		attrs = append(attrs, ShardIDKey.Int(shard))
	}
	if host, port, err := net.SplitHostPort(clientAddr); err == nil {
		attrs = append(attrs, semconv.ClientAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ClientPort(p))
		}
	} else if clientAddr != "" {
		attrs = append(attrs, semconv.ClientAddress(clientAddr)) // a unix socket path
	}
	span.SetAttributes(attrs...)
	return ctx, span
}

// EndCommand ends a span from StartCommand. errText is the error reply
// without its leading '-' and CRLF ("WRONGTYPE Operation against a key...");
// "" means the command succeeded. On error the span's status is Error with
// that text, and db.response.status_code and error.type hold the error
// prefix (ERR, WRONGTYPE...). Safe on a nil Tracer and a no-op span.
func (t *Tracer) EndCommand(span trace.Span, errText string) {
	if span == nil {
		return
	}
	if errText != "" && span.IsRecording() {
		errText = strings.TrimPrefix(errText, "-")
		errText = strings.TrimRight(errText, "\r\n")
		code := errText
		if i := strings.IndexByte(code, ' '); i >= 0 {
			code = code[:i]
		}
		span.SetAttributes(semconv.DBResponseStatusCode(code), semconv.ErrorTypeKey.String(code))
		span.SetStatus(codes.Error, errText)
	}
	span.End()
}

// Shutdown flushes the spans still queued and stops the exporter, within
// ctx's deadline (give it one, e.g. 5 s: an unreachable collector otherwise
// holds it for the exporter's 10 s timeout and retries). It returns ctx's
// error if the deadline passed first; spans not yet sent are then lost.
// Later spans are dropped. Safe to call more than once.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil || t.provider == nil {
		return nil
	}
	t.perRequest.Store(false)
	err := t.provider.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("tracing: shutdown: spans not flushed: %w", err)
	}
	return err
}

// liveSampler is TraceIDRatioBased with a rate that can change: it holds the
// SDK's sampler for the current rate behind an atomic pointer, so decisions
// stay exactly the SDK's and a change is one pointer store.
type liveSampler struct {
	cur atomic.Pointer[ratio]
}

type ratio struct {
	rate    float64
	sampler sdktrace.Sampler
}

func newLiveSampler(r float64) *liveSampler {
	s := new(liveSampler)
	s.set(r)
	return s
}

func (s *liveSampler) set(r float64) {
	s.cur.Store(&ratio{rate: r, sampler: sdktrace.TraceIDRatioBased(r)})
}

func (s *liveSampler) load() *ratio { return s.cur.Load() }

// ShouldSample implements sdktrace.Sampler.
func (s *liveSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	return s.cur.Load().sampler.ShouldSample(p)
}

// Description implements sdktrace.Sampler; it names the current rate.
func (s *liveSampler) Description() string {
	return "Live" + s.cur.Load().sampler.Description()
}

// ReplyError returns the error text of a RESP reply for EndCommand: the line
// after '-' (simple error) or the payload of a '!' blob error (RESP3), and ""
// for any other reply. It allocates only for an error. netloop calls it on
// the bytes the command appended to the connection's output.
func ReplyError(reply []byte) string {
	if len(reply) == 0 {
		return ""
	}
	switch reply[0] {
	case '-':
		line := reply[1:]
		if i := bytes.IndexByte(line, '\r'); i >= 0 {
			line = line[:i]
		}
		return string(line)
	case '!':
		i := bytes.Index(reply, []byte("\r\n"))
		if i < 0 {
			return ""
		}
		n, err := strconv.Atoi(string(reply[1:i]))
		body := reply[i+2:]
		if err != nil || n < 0 || n > len(body) {
			return ""
		}
		return string(body[:n])
	}
	return ""
}
