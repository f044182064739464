package tracing

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an in-process OTLP/HTTP collector: it decodes every
// ExportTraceServiceRequest and keeps the spans with their resource.
type receiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	requests int
	paths    []string
	ctypes   []string
	spans    []gotSpan
	block    chan struct{} // when not nil, requests wait for it to close
}

type gotSpan struct {
	span     *tracepb.Span
	resource map[string]string
	scope    string
}

func newReceiver(t *testing.T, block bool) *receiver {
	r := &receiver{}
	if block {
		r.block = make(chan struct{})
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.handle))
	t.Cleanup(r.srv.Close)
	if block {
		t.Cleanup(func() { close(r.block) }) // runs before srv.Close
	}
	return r
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	if r.block != nil {
		select {
		case <-r.block:
		case <-req.Context().Done():
		}
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var ex coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &ex); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.requests++
	r.paths = append(r.paths, req.URL.Path)
	r.ctypes = append(r.ctypes, req.Header.Get("Content-Type"))
	for _, rs := range ex.GetResourceSpans() {
		res := attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r.spans = append(r.spans, gotSpan{span: sp, resource: res, scope: ss.GetScope().GetName()})
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *receiver) got() (spans []gotSpan, requests int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gotSpan(nil), r.spans...), r.requests
}

// attrMap renders OTLP attributes as strings for comparison.
func attrMap(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[kv.GetKey()] = x.StringValue
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = "int:" + strconv.FormatInt(x.IntValue, 10)
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}

func newTracer(t *testing.T, o Options) *Tracer {
	t.Helper()
	tr, err := New(t.Context(), o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tr.Shutdown(ctx)
	})
	return tr
}

func shutdown(t *testing.T, tr *Tracer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestSpansArriveWithNamesAttributesAndResource(t *testing.T) {
	rcv := newReceiver(t, false)
	tr := newTracer(t, Options{
		Enabled: true, Endpoint: rcv.srv.URL, SamplingRate: 1,
		ServiceName: "svcdb-test", ServiceVersion: "1.2.3", PerRequestSpans: true,
	})
	if !tr.PerRequest() || !tr.Enabled() {
		t.Fatal("PerRequestSpans: true did not turn per-request spans on")
	}
	_, span := tr.StartCommand(t.Context(), "get", 3, 5, "10.1.2.3:50000")
	tr.EndCommand(span, "")
	_, span = tr.StartCommand(t.Context(), "client|setname", 0, -1, "[::1]:6000")
	tr.EndCommand(span, "WRONGTYPE Operation against a key holding the wrong kind of value")
	_, span = tr.StartCommand(t.Context(), "INCR", 20, 0, "/tmp/svcdb.sock")
	tr.EndCommand(span, "-ERR value is not an integer or out of range\r\n")
	shutdown(t, tr)

	spans, _ := rcv.got()
	if len(spans) != 3 {
		t.Fatalf("received %d spans; want 3", len(spans))
	}
	byName := map[string]gotSpan{}
	for _, s := range spans {
		byName[s.span.GetName()] = s
	}
	for _, want := range []struct {
		name   string
		attrs  map[string]string
		absent []string
		status tracepb.Status_StatusCode
		msg    string
	}{
		{"svc.get", map[string]string{
			"db.system.name": "redis", "db.operation.name": "GET", "db.namespace": "3",
			"svc.shard.id": "int:5", "client.address": "10.1.2.3", "client.port": "int:50000",
		}, []string{"db.response.status_code", "error.type"}, tracepb.Status_STATUS_CODE_UNSET, ""},
		{"svc.client|setname", map[string]string{
			"db.system.name": "redis", "db.operation.name": "CLIENT SETNAME", "db.namespace": "0",
			"client.address": "::1", "client.port": "int:6000",
			"db.response.status_code": "WRONGTYPE", "error.type": "WRONGTYPE",
		}, []string{"svc.shard.id"}, tracepb.Status_STATUS_CODE_ERROR, "WRONGTYPE Operation against a key holding the wrong kind of value"},
		{"svc.incr", map[string]string{
			"db.operation.name": "INCR", "db.namespace": "20", "svc.shard.id": "int:0",
			"client.address": "/tmp/svcdb.sock", "db.response.status_code": "ERR",
		}, []string{"client.port"}, tracepb.Status_STATUS_CODE_ERROR, "ERR value is not an integer or out of range"},
	} {
		s, ok := byName[want.name]
		if !ok {
			t.Errorf("no span %q among %v", want.name, byName)
			continue
		}
		got := attrMap(s.span.GetAttributes())
		for k, v := range want.attrs {
			if got[k] != v {
				t.Errorf("%s: %s = %q; want %q", want.name, k, got[k], v)
			}
		}
		for _, k := range want.absent {
			if _, ok := got[k]; ok {
				t.Errorf("%s: unexpected attribute %s = %q", want.name, k, got[k])
			}
		}
		if s.span.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("%s: kind %v; want server", want.name, s.span.GetKind())
		}
		if st := s.span.GetStatus(); st.GetCode() != want.status || st.GetMessage() != want.msg {
			t.Errorf("%s: status %v %q; want %v %q", want.name, st.GetCode(), st.GetMessage(), want.status, want.msg)
		}
		if len(s.span.GetParentSpanId()) != 0 {
			t.Errorf("%s: a root span has a parent", want.name)
		}
		if s.resource["service.name"] != "svcdb-test" || s.resource["service.version"] != "1.2.3" ||
			s.resource["telemetry.sdk.language"] != "go" {
			t.Errorf("%s: resource %v", want.name, s.resource)
		}
		if s.scope != ScopeName {
			t.Errorf("%s: scope %q; want %q", want.name, s.scope, ScopeName)
		}
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	for i, p := range rcv.paths {
		if p != "/v1/traces" || rcv.ctypes[i] != "application/x-protobuf" {
			t.Errorf("request %d: %s %s; want /v1/traces application/x-protobuf", i, p, rcv.ctypes[i])
		}
	}
}

func TestDefaultServiceName(t *testing.T) {
	rcv := newReceiver(t, false)
	tr := newTracer(t, Options{Enabled: true, Endpoint: rcv.srv.URL + "/", SamplingRate: 1})
	_, span := tr.StartCommand(t.Context(), "ping", 0, -1, "")
	tr.EndCommand(span, "")
	shutdown(t, tr)
	spans, _ := rcv.got()
	if len(spans) != 1 || spans[0].resource["service.name"] != DefaultServiceName {
		t.Fatalf("spans %v", spans)
	}
	if _, ok := spans[0].resource["service.version"]; ok {
		t.Error("service.version set without a ServiceVersion")
	}
	if _, ok := attrMap(spans[0].span.GetAttributes())["client.address"]; ok {
		t.Error("client.address set for an empty address")
	}
}

// sampled starts n root spans and counts the sampled ones.
func sampled(t testing.TB, tr *Tracer, n int) int {
	k := 0
	for range n {
		_, span := tr.StartCommand(context.Background(), "get", 0, 0, "127.0.0.1:1")
		if span.SpanContext().IsSampled() {
			k++
		}
		tr.EndCommand(span, "")
	}
	return k
}

func TestSampledFractionAtRateOneTenth(t *testing.T) {
	rcv := newReceiver(t, false)
	tr := newTracer(t, Options{Enabled: true, Endpoint: rcv.srv.URL, SamplingRate: 0.1, PerRequestSpans: true})
	const n = 10000
	k := sampled(t, tr, n)
	// Binomial(10000, 0.1): sd = 30, so 700..1300 is ten sd either side.
	if frac := float64(k) / n; frac < 0.07 || frac > 0.13 {
		t.Errorf("sampled %d of %d (%.3f); want 0.07..0.13", k, n, frac)
	}
	shutdown(t, tr)
	spans, _ := rcv.got()
	if len(spans) != k {
		t.Errorf("receiver got %d spans; %d were sampled", len(spans), k)
	}
}

func TestSetSamplingRateIsLive(t *testing.T) {
	rcv := newReceiver(t, false)
	tr := newTracer(t, Options{Enabled: true, Endpoint: rcv.srv.URL, SamplingRate: 1})
	if k := sampled(t, tr, 500); k != 500 {
		t.Errorf("rate 1: %d of 500 sampled", k)
	}
	if err := tr.SetSamplingRate(0); err != nil {
		t.Fatal(err)
	}
	if k := sampled(t, tr, 500); k != 0 {
		t.Errorf("rate 0: %d of 500 sampled", k)
	}
	if err := tr.SetSamplingRate(0.5); err != nil {
		t.Fatal(err)
	}
	if k := sampled(t, tr, 4000); k < 1600 || k > 2400 {
		t.Errorf("rate 0.5: %d of 4000 sampled", k)
	}
	if tr.SamplingRate() != 0.5 {
		t.Errorf("SamplingRate = %v", tr.SamplingRate())
	}
	for _, bad := range []float64{-0.01, 1.01, math.NaN(), math.Inf(1)} {
		if err := tr.SetSamplingRate(bad); err == nil {
			t.Errorf("SetSamplingRate(%v) accepted", bad)
		}
	}
	if tr.SamplingRate() != 0.5 {
		t.Errorf("a rejected rate changed it to %v", tr.SamplingRate())
	}
	if d := tr.sampler.Description(); d != "LiveTraceIDRatioBased{0.5}" {
		t.Errorf("Description = %q", d)
	}
}

// ParentBased: a command inside a trace that a client propagated follows the
// parent's decision, whatever the rate.
func TestParentDecisionWins(t *testing.T) {
	rcv := newReceiver(t, false)
	tr := newTracer(t, Options{Enabled: true, Endpoint: rcv.srv.URL, SamplingRate: 0})
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3},
		SpanID:     trace.SpanID{4, 5, 6},
		TraceFlags: trace.FlagsSampled,
		Remote:     true,
	})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	_, span := tr.StartCommand(ctx, "get", 0, 0, "")
	if !span.SpanContext().IsSampled() || span.SpanContext().TraceID() != parent.TraceID() {
		t.Error("child of a sampled parent not sampled at rate 0")
	}
	tr.EndCommand(span, "")
	if err := tr.SetSamplingRate(1); err != nil {
		t.Fatal(err)
	}
	ctx = trace.ContextWithRemoteSpanContext(context.Background(), parent.WithTraceFlags(0))
	_, span = tr.StartCommand(ctx, "get", 0, 0, "")
	if span.SpanContext().IsSampled() {
		t.Error("child of an unsampled parent sampled at rate 1")
	}
	tr.EndCommand(span, "")
}

func TestPerRequestSwitch(t *testing.T) {
	rcv := newReceiver(t, false)
	tr := newTracer(t, Options{Enabled: true, Endpoint: rcv.srv.URL, SamplingRate: 1})
	if tr.PerRequest() {
		t.Fatal("per-request spans on by default")
	}
	tr.SetPerRequestSpans(true)
	if !tr.PerRequest() {
		t.Fatal("SetPerRequestSpans(true) not seen")
	}
	tr.SetPerRequestSpans(false)
	if tr.PerRequest() {
		t.Fatal("SetPerRequestSpans(false) not seen")
	}
	if allocs := testing.AllocsPerRun(1000, func() { _ = tr.PerRequest() }); allocs != 0 {
		t.Errorf("PerRequest allocates %v times", allocs)
	}
}

func TestShutdownFlushesWithinDeadline(t *testing.T) {
	rcv := newReceiver(t, false)
	tr := newTracer(t, Options{Enabled: true, Endpoint: rcv.srv.URL, SamplingRate: 1, PerRequestSpans: true})
	for range 100 {
		_, span := tr.StartCommand(t.Context(), "set", 0, 1, "127.0.0.1:1")
		tr.EndCommand(span, "")
	}
	// The batcher's own timer is 5 s: only Shutdown can have sent them now.
	start := time.Now()
	shutdown(t, tr)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	if spans, _ := rcv.got(); len(spans) != 100 {
		t.Errorf("received %d spans after Shutdown; want 100", len(spans))
	}
	if tr.PerRequest() {
		t.Error("per-request spans still on after Shutdown")
	}
	if err := tr.Shutdown(t.Context()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

func TestShutdownRespectsDeadlineWhenCollectorHangs(t *testing.T) {
	rcv := newReceiver(t, true)
	tr, err := New(t.Context(), Options{Enabled: true, Endpoint: rcv.srv.URL, SamplingRate: 1, PerRequestSpans: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		_, span := tr.StartCommand(t.Context(), "get", 0, 0, "")
		tr.EndCommand(span, "")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = tr.Shutdown(ctx)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v with a 300ms deadline", d)
	}
	if err == nil {
		t.Error("Shutdown reported success although the collector never answered")
	}
}

func TestDisabledIsNoOp(t *testing.T) {
	rcv := newReceiver(t, false)
	tr := newTracer(t, Options{Enabled: false, Endpoint: rcv.srv.URL, SamplingRate: 1, PerRequestSpans: true})
	if tr.Enabled() || tr.PerRequest() {
		t.Fatal("disabled tracer reports enabled or per-request")
	}
	tr.SetPerRequestSpans(true)
	if tr.PerRequest() {
		t.Fatal("disabled tracer turned per-request spans on")
	}
	_, span := tr.StartCommand(t.Context(), "get", 0, 0, "127.0.0.1:1")
	if span.IsRecording() || span.SpanContext().IsValid() {
		t.Error("disabled tracer made a real span")
	}
	tr.EndCommand(span, "ERR x")
	if err := tr.SetSamplingRate(0.3); err != nil {
		t.Error(err)
	}
	if err := tr.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
	if _, n := rcv.got(); n != 0 {
		t.Errorf("disabled tracer sent %d requests", n)
	}
	if _, ok := tr.TracerProvider().(interface{ Shutdown(context.Context) error }); ok {
		t.Error("disabled tracer exposes an SDK provider")
	}

	var nilTr *Tracer // code given no tracer needs no branch
	if nilTr.PerRequest() || nilTr.Enabled() {
		t.Error("nil tracer on")
	}
	nilTr.SetPerRequestSpans(true)
	_, span = nilTr.StartCommand(t.Context(), "get", 0, 0, "")
	nilTr.EndCommand(span, "ERR")
	if err := nilTr.Shutdown(t.Context()); err != nil {
		t.Error(err)
	}
}

func TestOptionsValidation(t *testing.T) {
	for _, o := range []Options{
		{SamplingRate: -0.1},
		{SamplingRate: 1.5},
		{SamplingRate: math.NaN()},
		{Endpoint: "localhost:4318"},
		{Endpoint: "ftp://collector:4318"},
		{Endpoint: "http://"},
		{Endpoint: "http://a b"},
	} {
		if _, err := New(t.Context(), o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
		o.Enabled = true
		if _, err := New(t.Context(), o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	for in, want := range map[string]string{
		"":                                   "http://127.0.0.1:4318/v1/traces",
		"http://127.0.0.1:4318":              "http://127.0.0.1:4318/v1/traces",
		"http://collector:4318/":             "http://collector:4318/v1/traces",
		"https://otel.example.com/otlp":      "https://otel.example.com/otlp/v1/traces",
		"http://collector:4318/v1/traces":    "http://collector:4318/v1/traces",
		"http://collector:4318/v1/traces/":   "http://collector:4318/v1/traces",
		"http://[::1]:4318":                  "http://[::1]:4318/v1/traces",
		"https://otel.example.com/otlp?x=1/": "https://otel.example.com/otlp/v1/traces?x=1/",
	} {
		got, err := tracesURL(in)
		if err != nil || got != want {
			t.Errorf("tracesURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// BenchmarkPerRequestOff is the whole cost a command pays with per-request
// spans off: one atomic load, no allocation.
func BenchmarkPerRequestOff(b *testing.B) {
	tr, err := New(context.Background(), Options{Enabled: true, SamplingRate: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if tr.PerRequest() {
			n++
		}
	}
	if n != 0 {
		b.Fatal("per-request spans on")
	}
}

// BenchmarkStartCommand is the cost per command with per-request spans on,
// for a sampled and an unsampled span (export not included: the batcher
// queue is drained to a collector that discards).
func BenchmarkStartCommand(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // a handler has no one to report to
	}))
	defer srv.Close()
	for _, rate := range []float64{1, 0} {
		name := "sampled"
		if rate == 0 {
			name = "unsampled"
		}
		b.Run(name, func(b *testing.B) {
			tr, err := New(context.Background(), Options{Enabled: true, Endpoint: srv.URL, SamplingRate: rate, PerRequestSpans: true})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Shutdown(context.Background())
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if tr.PerRequest() {
					_, span := tr.StartCommand(ctx, "get", 0, 3, "127.0.0.1:50000")
					tr.EndCommand(span, "")
				}
			}
		})
	}
}

func TestReplyError(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "",
		"+OK\r\n":                          "",
		"$3\r\nabc\r\n":                    "",
		":1\r\n":                           "",
		"-ERR no such key\r\n":             "ERR no such key",
		"-WRONGTYPE Operation\r\n+OK":      "WRONGTYPE Operation",
		"-ERR partial":                     "ERR partial",
		"!21\r\nSYNTAX invalid syntax\r\n": "SYNTAX invalid syntax",
		"!99\r\nshort\r\n":                 "",
		"!x\r\n":                           "",
		"!5":                               "",
	} {
		if got := ReplyError([]byte(in)); got != want {
			t.Errorf("ReplyError(%q) = %q; want %q", in, got, want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = ReplyError([]byte("+OK\r\n")) }); allocs != 0 {
		t.Errorf("ReplyError allocates %v times for a non-error", allocs)
	}
}
