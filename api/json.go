package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// JSON converts a YAML document (a bundled spec) to JSON keeping every mapping's keys in the order
// written. Generators read order as meaning (orval picks a request body's first media type, Swagger
// UI lists properties as they come), so the JSON a tool fetches (/openapi/<surface>.json) must build
// the same client as the YAML; a conversion through a Go map would sort the keys.
func JSON(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		return nil, fmt.Errorf("not one YAML document")
	}
	var b bytes.Buffer
	if err := writeJSON(&b, root.Content[0]); err != nil {
		return nil, err
	}
	if !json.Valid(b.Bytes()) {
		return nil, fmt.Errorf("the conversion produced invalid JSON") // a bug here, not in the document
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.AliasNode:
		return writeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: a mapping key that is not a scalar", k.Line)
			}
			if k.Value == "<<" {
				return fmt.Errorf("line %d: merge keys are not supported", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: key %q twice", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k.Value) // JSON keys are strings: a status code 200 becomes "200"
			b.WriteByte(':')
			if err := writeJSON(b, v); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, v := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, v); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case yaml.ScalarNode:
		return writeScalar(b, n)
	default:
		return fmt.Errorf("line %d: unexpected YAML node", n.Line)
	}
	return nil
}

func writeScalar(b *bytes.Buffer, n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		b.WriteString("null")
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err != nil {
			return err
		}
		b.WriteString(strconv.FormatBool(v))
	case "!!int", "!!float":
		// Keep the literal where JSON can (120.50 stays 120.50, exact); otherwise its value.
		if json.Valid([]byte(n.Value)) && !strings.ContainsAny(n.Value, "+_") {
			b.WriteString(n.Value)
			return nil
		}
		var v float64
		if err := n.Decode(&v); err != nil {
			return err
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return fmt.Errorf("line %d: %s has no JSON form", n.Line, n.Value)
		}
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	default: // !!str, !!timestamp (kept as written), !!binary
		writeString(b, n.Value)
	}
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s) // a string always encodes
	// encoding/json escapes <, > and & for HTML; a spec is no HTML, keep them readable.
	enc = bytes.ReplaceAll(enc, []byte(`\u003c`), []byte("<"))
	enc = bytes.ReplaceAll(enc, []byte(`\u003e`), []byte(">"))
	enc = bytes.ReplaceAll(enc, []byte(`\u0026`), []byte("&"))
	b.Write(enc)
}
