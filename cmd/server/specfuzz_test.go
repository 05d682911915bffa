package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/surfaces/brands/devdata"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// specFuzzRequests is how many requests TestServer_SpecFuzz sends by default: a count rather than
// a duration, so a run fuzzes as much on a loaded machine as on a quiet one and takes no fixed
// slice of go test's time. TRIAD_SPECFUZZ_REQUESTS sets another count, TRIAD_SPECFUZZ_DURATION a
// time instead (long runs).
const specFuzzRequests = 3000

// TestServer_SpecFuzz sends requests generated from the three specs' schemas to the whole server
// over a socket, a bounded number of them (specFuzzRequests, TRIAD_SPECFUZZ_REQUESTS) or for a
// bounded time (TRIAD_SPECFUZZ_DURATION); TRIAD_SPECFUZZ_SEED replays a run: valid, boundary and
// near-valid values, wrong types and odd bytes, with and without credentials. Any 5xx fails, and so
// does any answer the spec does not document (apitest validates every response).
func TestServer_SpecFuzz(t *testing.T) {
	t.Parallel()
	requests := specFuzzRequests
	if v := os.Getenv("TRIAD_SPECFUZZ_REQUESTS"); v != "" {
		if _, err := fmt.Sscan(v, &requests); err != nil || requests < 1 {
			t.Fatalf("TRIAD_SPECFUZZ_REQUESTS=%q: want a positive count", v)
		}
	}
	var deadline time.Time // zero: no time bound, only the count
	if v := os.Getenv("TRIAD_SPECFUZZ_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("TRIAD_SPECFUZZ_DURATION: %v", err)
		}
		deadline, requests = time.Now().Add(d), 0 // a duration alone bounds the run
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("TRIAD_SPECFUZZ_SEED"); v != "" {
		if _, err := fmt.Sscan(v, &seed); err != nil {
			t.Fatalf("TRIAD_SPECFUZZ_SEED: %v", err)
		}
	}
	t.Logf("seed %d (TRIAD_SPECFUZZ_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	base, _ := routerServer(t, "-mode", "dev", "-database-url", dbtest.NewURL(t))
	type target struct {
		client       *http.Client
		path, method string
		op           *openapi3.Operation
		params       openapi3.Parameters
	}
	var targets []target
	clients := map[string]*http.Client{}
	for _, name := range specNames {
		data, err := api.FS.ReadFile(name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		spec, err := openapi3.NewLoader().LoadFromData(data)
		if err != nil {
			t.Fatal(err)
		}
		c := apitest.Client(t, spec)
		clients[name] = c
		paths := spec.Paths.InMatchingOrder()
		sort.Strings(paths)
		for _, p := range paths {
			item := spec.Paths.Value(p)
			methods := []string{}
			for m := range item.Operations() {
				methods = append(methods, m)
			}
			sort.Strings(methods)
			for _, m := range methods {
				op := item.GetOperation(m)
				targets = append(targets, target{c, p, m, op, append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...)})
			}
		}
	}

	// Credentials of the dev data, so the fuzzer gets past authentication too.
	var creds []http.Header
	q := url.Values{"grant_type": {"password"}, "client_id": {devOrdersClientID}, "client_secret": {devOrdersClientSecret}}
	for _, u := range []string{"alice", "bob"} {
		q.Set("username", u)
		q.Set("password", u+"-password")
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		if postJSONish(t, clients["orders"], base+"/oauth/token", "application/x-www-form-urlencoded", q.Encode(), &tok) == http.StatusOK {
			creds = append(creds, http.Header{"Authorization": {"Bearer " + tok.AccessToken}})
		}
	}
	var bt struct {
		Token string `json:"token"`
	}
	form := url.Values{"email": {devdata.AdminEmail}, "password": {devdata.AdminPassword}}.Encode()
	if postJSONish(t, clients["brands"], base+"/api/user/login", "application/x-www-form-urlencoded", form, &bt) == http.StatusOK {
		creds = append(creds, http.Header{"Authorization": {"Bearer " + bt.Token}})
	}
	if len(creds) < 3 {
		t.Fatalf("dev data logins failed: %d of 3", len(creds))
	}

	g := &gen{rng: rng}
	start, sent := time.Now(), 0
	for (requests == 0 || sent < requests) && (deadline.IsZero() || time.Now().Before(deadline)) && !t.Failed() {
		tg := targets[rng.IntN(len(targets))]
		path := tg.path
		query := url.Values{}
		header := http.Header{}
		for _, pr := range tg.params {
			p := pr.Value
			if p == nil || (!p.Required && rng.IntN(3) == 0) {
				continue
			}
			v := g.text(p.Schema)
			switch p.In {
			case openapi3.ParameterInPath:
				if v == "" || strings.Contains(v, "/") {
					v = "0" // an empty or slashed segment is another route, not this one's parameter
				}
				path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(v))
			case openapi3.ParameterInQuery:
				query.Add(p.Name, v)
			case openapi3.ParameterInHeader:
				if !strings.ContainsAny(v, "\x00\r\n") {
					header.Set(p.Name, v)
				}
			}
		}
		if rng.IntN(2) == 0 {
			for k, v := range creds[rng.IntN(len(creds))] {
				header[k] = v
			}
		}
		var body, ctype string
		if rb := tg.op.RequestBody; rb != nil && rb.Value != nil && len(rb.Value.Content) > 0 && rng.IntN(8) != 0 {
			types := make([]string, 0, len(rb.Value.Content))
			for ct := range rb.Value.Content {
				types = append(types, ct)
			}
			sort.Strings(types)
			ctype = types[rng.IntN(len(types))]
			v := g.value(rb.Value.Content[ctype].Schema, 0)
			if ctype == "application/x-www-form-urlencoded" {
				body = g.form(v)
			} else {
				body = g.mangle(v)
			}
		}
		u := base + path
		if len(query) > 0 {
			u += "?" + query.Encode()
		}
		req, err := http.NewRequest(strings.ToUpper(tg.method), u, strings.NewReader(body))
		if err != nil {
			continue // a generated path Go cannot even send
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		res, err := tg.client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", req.Method, u, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		sent++
		if res.StatusCode >= 500 {
			t.Errorf("%s %s (%s %q) -> %d %s", req.Method, u, ctype, truncate(body), res.StatusCode, b)
		}
	}
	t.Logf("%d requests in %v", sent, time.Since(start).Round(time.Millisecond))
}

func postJSONish(t *testing.T, c *http.Client, u, ctype, body string, v any) int {
	t.Helper()
	res, err := c.Post(u, ctype, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	_ = json.Unmarshal(b, v)
	return res.StatusCode
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// gen makes values from schemas: mostly valid or at the boundaries, sometimes of the wrong type
// or holding bytes no user types.
type gen struct{ rng *rand.Rand }

var oddStrings = []string{"", " ", "\x00", "a\x00b", "\xff", "\xc3", "%00", "%FF", "\u202e", "😀", "0", "-1", "1e309",
	"99999999999999999999999999999999999", "null", "{}", "../..", "' OR 1=1 --", "<script>", strings.Repeat("x", 5000)}

// text is a parameter value for schema.
func (g *gen) text(ref *openapi3.SchemaRef) string {
	v := g.value(ref, 0)
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		b, _ := json.Marshal(v)
		return strings.Trim(string(b), `"`)
	}
}

func (g *gen) value(ref *openapi3.SchemaRef, depth int) any {
	if ref == nil || ref.Value == nil || depth > 6 {
		return "x"
	}
	s := ref.Value
	switch g.rng.IntN(10) {
	case 0: // wrong type
		return []any{"x", 1, true, nil, []any{}, map[string]any{}}[g.rng.IntN(6)]
	case 1:
		return oddStrings[g.rng.IntN(len(oddStrings))]
	case 2:
		if s.Example != nil {
			return s.Example
		}
	}
	if len(s.Enum) > 0 && g.rng.IntN(4) != 0 {
		return s.Enum[g.rng.IntN(len(s.Enum))]
	}
	if len(s.OneOf) > 0 {
		return g.value(s.OneOf[g.rng.IntN(len(s.OneOf))], depth+1)
	}
	if len(s.AllOf) > 0 {
		return g.value(s.AllOf[0], depth+1)
	}
	switch {
	case s.Type.Is(openapi3.TypeInteger), s.Type.Is(openapi3.TypeNumber):
		cands := []float64{0, 1, -1, 100, 1e6, 1e15}
		if s.Min != nil {
			cands = append(cands, *s.Min, *s.Min-1)
		}
		if s.Max != nil {
			cands = append(cands, *s.Max, *s.Max+1)
		}
		n := cands[g.rng.IntN(len(cands))]
		if s.Type.Is(openapi3.TypeNumber) && g.rng.IntN(3) == 0 {
			n += 0.005
		}
		return n
	case s.Type.Is(openapi3.TypeBoolean):
		return g.rng.IntN(2) == 0
	case s.Type.Is(openapi3.TypeArray):
		n := g.rng.IntN(4)
		out := make([]any, n)
		for i := range out {
			out[i] = g.value(s.Items, depth+1)
		}
		return out
	case s.Type.Is(openapi3.TypeObject) || len(s.Properties) > 0:
		out := map[string]any{}
		for name, p := range s.Properties {
			if g.rng.IntN(5) != 0 {
				out[name] = g.value(p, depth+1)
			}
		}
		if g.rng.IntN(6) == 0 {
			out[oddStrings[g.rng.IntN(len(oddStrings))]] = "extra"
		}
		return out
	default: // string
		switch g.rng.IntN(4) {
		case 0:
			if s.MaxLength != nil {
				return strings.Repeat("a", int(*s.MaxLength)+g.rng.IntN(2))
			}
		case 1:
			return oddStrings[g.rng.IntN(len(oddStrings))]
		}
		switch s.Format {
		case "email":
			return []string{"ada@example.com", "a@b", "not-an-email"}[g.rng.IntN(3)]
		case "uri":
			return []string{"https://example.com/x", "javascript:alert(1)", "//evil.test"}[g.rng.IntN(3)]
		}
		return fmt.Sprintf("fuzz-%d", g.rng.IntN(1000))
	}
}

// mangle renders v as JSON, sometimes broken the ways attackers break it.
func (g *gen) mangle(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	switch g.rng.IntN(8) {
	case 0:
		return s + "garbage"
	case 1:
		if strings.HasPrefix(s, "{") && len(s) > 2 {
			return `{"price":1,` + s[1:]
		}
	case 2:
		return strings.Repeat("[", 40) + s + strings.Repeat("]", 40)
	case 3:
		return strings.Replace(s, `"`, "\"\xff", 1)
	case 4:
		return s[:g.rng.IntN(len(s)+1)]
	}
	return s
}

// form renders an object as a form body (other values as one odd field).
func (g *gen) form(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return "x=" + url.QueryEscape(fmt.Sprint(v))
	}
	f := url.Values{}
	for k, val := range m {
		switch val := val.(type) {
		case string:
			f.Set(k, val)
		default:
			b, _ := json.Marshal(val)
			f.Set(k, string(b))
		}
	}
	s := f.Encode()
	if g.rng.IntN(6) == 0 {
		s += "&email=%FF"
	}
	return s
}
