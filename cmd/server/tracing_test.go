package main

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes what an exporter POSTs to /v1/traces
// (ExportTraceServiceRequest in protobuf) and keeps the spans.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	names []string // the service.name of each request's resources
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want a protobuf POST to /v1/traces", http.StatusNotFound)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(b, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				o.names = append(o.names, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// span returns the first span received named name, or nil.
func (o *otlpReceiver) span(name string) *tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.spans {
		if s.Name == name {
			return s
		}
	}
	return nil
}

func (o *otlpReceiver) children(parent *tracepb.Span) []*tracepb.Span {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []*tracepb.Span
	for _, s := range o.spans {
		if bytes.Equal(s.ParentSpanId, parent.SpanId) && bytes.Equal(s.TraceId, parent.TraceId) {
			out = append(out, s)
		}
	}
	return out
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.GetValue().GetStringValue()
		}
	}
	return ""
}

// TestServer_TracesOverOTLP runs a prod-mode server with the standard OTEL_* variables pointing
// at a real OTLP/HTTP receiver: a POST /orders sent with a caller's traceparent from a trusted
// proxy becomes a server span named createOrder in the caller's trace, with the SQL statements it
// ran as its child spans. Not parallel: the variables are the process's environment.
func TestServer_TracesOverOTLP(t *testing.T) {
	recv := &otlpReceiver{}
	collector := httptest.NewServer(recv)
	t.Cleanup(collector.Close) // after the server's stop (cleanups run last first), which sends its last spans
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100") // ms: spans leave soon after they end

	base, _ := routerServer(t, "-mode", "prod", "-database-url", dbtest.NewURL(t), "-orders-client-id", "prod-client",
		"-orders-client-secret", "prod-client-secret-0123456789", "-auth-secret", "0123456789abcdef0123456789abcdef",
		"-trusted-proxies", "127.0.0.1/32")
	c := &http.Client{}
	if a := send(t, c, "POST", base+"/users", map[string]string{"username": "tracy", "password": "tracy-password", "userType": "Customer"}); a.status != http.StatusCreated {
		t.Fatalf("register: %d %s", a.status, a.body)
	}
	a := send(t, c, "POST", base+"/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {"prod-client"},
		"client_secret": {"prod-client-secret-0123456789"}, "username": {"tracy"}, "password": {"tracy-password"}})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if a.status != http.StatusOK || json.Unmarshal([]byte(a.body), &tok) != nil {
		t.Fatalf("token: %d %s", a.status, a.body)
	}
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest(http.MethodPost, base+"/orders", bytes.NewReader([]byte(`{"description":"Paint the fence","price":"120.50"}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /orders: %d", resp.StatusCode)
	}

	// The batch goes out every 100 ms; a busy machine may take much longer.
	var server *tracepb.Span
	for deadline := time.Now().Add(2 * time.Minute); server == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		server = recv.span("createOrder")
	}
	if server == nil {
		t.Fatal("no createOrder span reached the OTLP receiver")
	}
	if server.Kind != tracepb.Span_SPAN_KIND_SERVER || hex.EncodeToString(server.TraceId) != traceID ||
		hex.EncodeToString(server.ParentSpanId) != parentID {
		t.Fatalf("createOrder span: kind %v trace %x parent %x; want a server span in trace %s under %s",
			server.Kind, server.TraceId, server.ParentSpanId, traceID, parentID)
	}
	if got := attr(server, "http.route"); got != "/orders" {
		t.Errorf("http.route = %q, want /orders", got)
	}
	// The SQL spans end before the server span, so they are in its batch or an earlier one.
	var sql []*tracepb.Span
	for _, s := range recv.children(server) {
		if attr(s, "db.system.name") == "postgresql" {
			sql = append(sql, s)
		}
	}
	if len(sql) == 0 {
		t.Fatalf("createOrder has no SQL child span: %v", recv.children(server))
	}
	for _, s := range sql {
		if s.Kind != tracepb.Span_SPAN_KIND_CLIENT || attr(s, "db.query.text") == "" {
			t.Errorf("SQL span %q: kind %v, text %q", s.Name, s.Kind, attr(s, "db.query.text"))
		}
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, n := range recv.names {
		if n != "triad" {
			t.Errorf("service.name %q, want triad (OTEL_SERVICE_NAME unset)", n)
		}
	}
}
