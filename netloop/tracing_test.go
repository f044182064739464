package netloop_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svcdb/svcdb/core/tracing"
	"github.com/svcdb/svcdb/netloop"
)

// otlpReceiver is an in-process OTLP/HTTP collector recording span names and
// attributes.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []map[string]string // "name" plus string attributes
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var ex coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &ex); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	r.mu.Lock()
	for _, rs := range ex.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				m := map[string]string{"name": sp.Name, "status": sp.Status.GetCode().String()}
				for _, a := range sp.Attributes {
					m[a.Key] = a.Value.GetStringValue()
				}
				r.spans = append(r.spans, m)
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (r *otlpReceiver) byName(name string) []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]string
	for _, s := range r.spans {
		if s["name"] == name {
			out = append(out, s)
		}
	}
	return out
}

// TestPerRequestSpans: with per-request spans on, each command becomes a span
// named svc.<command> with Redis semantic attributes, errors included; off,
// none are made. Both drain strategies (the dedicated one queues every command).
func TestPerRequestSpans(t *testing.T) {
	for _, st := range strategies() {
		t.Run(st.String(), func(t *testing.T) {
			rec := &otlpReceiver{}
			collector := httptest.NewServer(rec)
			defer collector.Close()
			tr, err := tracing.New(context.Background(), tracing.Options{
				Enabled: true, Endpoint: collector.URL, SamplingRate: 1, ServiceName: "svcdb-test",
			})
			if err != nil {
				t.Fatal(err)
			}
			ts := startServer(t, withStrategy(st), withNetConfig(func(c *netloop.Config) { c.Tracer = tr }))
			c := dialRaw(t, ts.Addr)
			c.do("SET", "k", "v") // off: no span
			tr.SetPerRequestSpans(true)
			c.do("GET", "k")
			c.do("INCR", "k") // an error reply
			c.do("PING")
			tr.SetPerRequestSpans(false)
			c.do("GET", "k")
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := tr.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if n := len(rec.byName("svc.set")); n != 0 {
				t.Fatalf("%d spans for SET sent while per-request spans were off", n)
			}
			gets := rec.byName("svc.get")
			if len(gets) != 1 {
				t.Fatalf("%d GET spans; want 1 (one while on, none while off)", len(gets))
			}
			if gets[0]["db.system.name"] != "redis" || gets[0]["db.namespace"] != "0" {
				t.Fatalf("GET span attributes: %v", gets[0])
			}
			if len(rec.byName("svc.ping")) != 1 {
				t.Fatal("no span for PING (a loop-side command)")
			}
			incr := rec.byName("svc.incr")
			if len(incr) != 1 {
				t.Fatalf("%d INCR spans", len(incr))
			}
			// Both paths: executed at once, or queued in a batch (every
			// command under the dedicated strategy, a busy shard's under
			// run-to-completion), whose spans end with their own replies.
			if incr[0]["status"] != "STATUS_CODE_ERROR" {
				t.Fatalf("INCR on a non-integer: span status %v; want an error", incr[0])
			}
		})
	}
}
