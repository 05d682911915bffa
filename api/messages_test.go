package api_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/web"
)

// TestMessages_ExamplesShowWhatTheServerSends: a frontend team writes its error handling from the
// specs' examples, and a mock server (make mock) answers with them, so an example of a shared code
// must carry the message the server really sends, the one impl/web defines for that code. Every
// object in a document with a string code and a string message counts as an example of an error
// body, wherever it sits (a response's example, a named example, a schema's example).
func TestMessages_ExamplesShowWhatTheServerSends(t *testing.T) {
	checked := map[string]int{}
	for _, name := range []string{"orders", "brands", "auth"} {
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
		var walk func(where string, v any)
		walk = func(where string, v any) {
			switch v := v.(type) {
			case map[string]any:
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
				for k, inner := range v {
					walk(where+"/"+k, inner)
				}
			case []any:
				for i, inner := range v {
					walk(fmt.Sprintf("%s/%d", where, i), inner)
				}
			}
		}
		walk("", doc)
	}
	// The walk must have found the examples it is about, or it checks nothing.
	for _, code := range []string{web.CodeValidation, web.CodeTooLarge, web.CodeUnsupportedMediaType, web.CodeUnauthorized} {
		if checked[code] == 0 {
			t.Errorf("no example of %s found in the specs", code)
		}
	}
}
