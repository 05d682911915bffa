package api_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
)

// TestMessages_ExamplesShowWhatTheServerSends: a frontend team writes its error handling from the
// specs' examples, and a mock server (make mock) answers with them, so an example of a shared code
// must carry the message the server really sends, the one impl/kit/web defines for that code. Every
// object in a document with a string code and a string message counts as an example of an error
// body, wherever it sits (a response's example, a named example, a schema's example).
func TestMessages_ExamplesShowWhatTheServerSends(t *testing.T) {
	checked := map[string]int{}
	for _, name := range api.Names() {
		eachObject(loadJSON(t, name), func(where string, v map[string]any) {
			code, okCode := v["code"].(string)
			msg, okMsg := v["message"].(string)
			if okCode && okMsg {
				if want, shared := web.OneMessage(code); shared {
					checked[code]++
					if msg != want {
						t.Errorf("%s.yaml %s: example %s says %q, the server sends %q", name, where, code, msg, want)
					}
				}
			}
		})
	}
	// The walk must have found the examples it is about, or it checks nothing.
	for _, code := range []string{web.CodeValidation, web.CodeTooLarge, web.CodeUnsupportedMediaType, web.CodeUnauthorized} {
		if checked[code] == 0 {
			t.Errorf("no example of %s found in the specs", code)
		}
	}
}

// TestMessages_DetailCodesAreTheServers: every spec documents the detail codes package invalid
// defines, no more and no fewer, and every example of a detail (an object with in, field, code and
// message) carries the message the server sends for its code and limit.
func TestMessages_DetailCodesAreTheServers(t *testing.T) {
	want := make([]string, len(invalid.Codes))
	for i, c := range invalid.Codes {
		want[i] = string(c)
	}
	examples := 0
	for _, name := range api.Names() {
		doc := loadJSON(t, name)
		detail, _ := dig(doc, "components", "schemas", "ErrorDetail", "properties", "code", api.Extensible).([]any)
		var got []string
		for _, c := range detail {
			got = append(got, fmt.Sprint(c))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s.yaml ErrorDetail.code enum %v, want invalid.Codes %v", name, got, want)
		}
		eachObject(doc, func(where string, v map[string]any) {
			code, okCode := v["code"].(string)
			msg, okMsg := v["message"].(string)
			if _, okIn := v["in"].(string); !okCode || !okMsg || !okIn {
				return
			}
			examples++
			var limit json.Number
			if l, ok := v["limit"]; ok {
				limit = json.Number(fmt.Sprint(l))
			}
			expected, _ := v["expected"].(string)
			var allowed []string
			if a, ok := v["allowed"].([]any); ok {
				for _, x := range a {
					allowed = append(allowed, fmt.Sprint(x))
				}
			}
			if w := invalid.Message(invalid.Code(code), limit, expected, allowed); msg != w {
				t.Errorf("%s.yaml %s: detail %s says %q, the server sends %q", name, where, code, msg, w)
			}
		})
	}
	if examples < 3 {
		t.Errorf("found %d examples of details, want one per spec at least", examples)
	}
}

// loadJSON is a spec as JSON values.
func loadJSON(t *testing.T, name string) any {
	t.Helper()
	body, err := api.FS.ReadFile(name + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(body)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var doc any
	if err := json.Unmarshal(j, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc
}

// dig walks nested objects by key.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// eachObject calls fn with every object inside v and where it sits.
func eachObject(v any, fn func(where string, m map[string]any)) {
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			fn(where, v)
			for k, inner := range v {
				walk(where+"/"+k, inner)
			}
		case []any:
			for i, inner := range v {
				walk(fmt.Sprintf("%s/%d", where, i), inner)
			}
		}
	}
	walk("", v)
}

// TestNumbers_ExactInGoClients: every number a spec declares carries `x-go-type: json.Number`, so
// a Go client generated from the served document with oapi-codegen's defaults holds it exactly
// (its default for a number is float32: 999999.99 reads as 1e+06). e2e's
// TestGeneratedClients_MoneyIsExact generates the clients; this fails first, without a server.
func TestNumbers_ExactInGoClients(t *testing.T) {
	numbers := 0
	for _, name := range []string{"orders", "brands", "auth"} {
		eachObject(loadJSON(t, name), func(where string, v map[string]any) {
			if v["type"] != "number" {
				return
			}
			numbers++
			if v["x-go-type"] != "json.Number" {
				t.Errorf("%s.yaml %s: a number without x-go-type: json.Number (a float32 in generated Go clients)", name, where)
			}
		})
	}
	if numbers == 0 {
		t.Error("no number found in the specs: the walk checks nothing")
	}
}
