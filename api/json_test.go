package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestJSON_KeepsTheYAMLsOrder: every bundle's JSON holds the same values as the YAML, with every
// object's keys in the YAML's order (a tool building a client from the .json builds the one it
// builds from the .yaml).
func TestJSON_KeepsTheYAMLsOrder(t *testing.T) {
	for _, name := range Names() {
		body, err := Spec(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := JSON(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var fromJSON, fromYAML any
		if err := json.Unmarshal(got, &fromJSON); err != nil {
			t.Fatal(err)
		}
		want, err := sigsyaml.YAMLToJSON(body)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(want, &fromYAML); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fromJSON, fromYAML) {
			t.Errorf("%s: the JSON holds other values than the YAML", name)
		}
		var node yaml.Node
		if err := yaml.Unmarshal(body, &node); err != nil {
			t.Fatal(err)
		}
		if y, j := yamlKeyOrder(node.Content[0], ""), jsonKeyOrder(t, got); !reflect.DeepEqual(y, j) {
			t.Errorf("%s: the JSON's keys are in another order than the YAML's", name)
		}
	}
}

// yamlKeyOrder lists every mapping's keys, each prefixed by its path, in document order.
func yamlKeyOrder(n *yaml.Node, path string) []string {
	var out []string
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			p := path + "/" + n.Content[i].Value
			out = append(out, p)
			out = append(out, yamlKeyOrder(n.Content[i+1], p)...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			out = append(out, yamlKeyOrder(c, path+"/"+strings.Repeat("#", i+1))...)
		}
	}
	return out
}

// jsonKeyOrder is yamlKeyOrder over a JSON document, read token by token.
func jsonKeyOrder(t *testing.T, body []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	var out []string
	var walk func(path string)
	walk = func(path string) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					t.Fatal(err)
				}
				p := path + "/" + k.(string)
				out = append(out, p)
				walk(p)
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for i := 1; dec.More(); i++ {
				walk(path + "/" + strings.Repeat("#", i))
			}
			_, _ = dec.Token()
		}
	}
	walk("")
	return out
}

// TestJSON_Scalars: numbers keep their literal, keys are strings, and YAML-only forms are refused
// or converted.
func TestJSON_Scalars(t *testing.T) {
	got, err := JSON([]byte("b: 120.50\na: {200: x, 'y': [true, null, 1e3, '3']}\nc: <&>\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"b":120.50,"a":{"200":"x","y":[true,null,1e3,"3"]},"c":"<&>"}`
	if compact := strings.Join(strings.Fields(string(got)), ""); compact != want {
		t.Errorf("got %s, want %s", compact, want)
	}
	if _, err := JSON([]byte("a: .inf\n")); err == nil {
		t.Error(".inf converted")
	}
}
