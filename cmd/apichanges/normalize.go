package main

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// A bundle is read as a YAML node tree, so what apichanges hands oasdiff is the document as
// written (comments aside) with one difference (operationParameters), and so the open lists
// (openListChanges) keep their order.

// parseDoc reads an OpenAPI document.
func parseDoc(name string, body []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: not one OpenAPI document", name)
	}
	return doc.Content[0], nil
}

// encodeDoc writes a document parsed by parseDoc.
func encodeDoc(root *yaml.Node) ([]byte, error) {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// get is the value of key in mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// operationKeys are the keys of a path item that hold an operation.
var operationKeys = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// operationParameters declares every parameter of a path item on each of its operations instead
// (unless the operation declares one of the same name and location, which overrides it, as
// OpenAPI 3 says), in place. Both documents compared go through it, so a parameter is compared
// with itself wherever either declares it: oasdiff compares the two levels apart, and a
// parameter moved from the path item to the operations (e.g. so that each gets an example of its
// own) would otherwise be "a new path parameter" on every operation, and its schema compared with
// nothing, so a narrowing (string to integer, a new maxLength) would go unseen.
func operationParameters(root *yaml.Node) error {
	paths := get(root, "paths")
	if paths == nil {
		return nil
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		item := paths.Content[i+1]
		shared := get(item, "parameters")
		if shared == nil {
			continue
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			if !slices.Contains(operationKeys, item.Content[j].Value) {
				continue
			}
			op := item.Content[j+1]
			own := get(op, "parameters")
			if own == nil {
				own = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
				op.Content = append(op.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "parameters"}, own)
			}
			declared := map[[2]string]bool{}
			for _, p := range own.Content {
				k, err := parameterKey(root, p)
				if err != nil {
					return fmt.Errorf("paths.%s.%s: %w", paths.Content[i].Value, item.Content[j].Value, err)
				}
				declared[k] = true
			}
			var add []*yaml.Node
			for _, p := range shared.Content {
				k, err := parameterKey(root, p)
				if err != nil {
					return fmt.Errorf("paths.%s: %w", paths.Content[i].Value, err)
				}
				if !declared[k] {
					add = append(add, p)
				}
			}
			own.Content = append(add, own.Content...)
		}
		for j := 0; j+1 < len(item.Content); j += 2 {
			if item.Content[j].Value == "parameters" {
				item.Content = slices.Delete(item.Content, j, j+2)
				break
			}
		}
	}
	return nil
}

// parameterKey is a parameter's name and location (in), read through a $ref to the document's
// components.parameters.
func parameterKey(root, p *yaml.Node) ([2]string, error) {
	if ref := get(p, "$ref"); ref != nil {
		name, ok := strings.CutPrefix(ref.Value, "#/components/parameters/")
		if !ok {
			return [2]string{}, fmt.Errorf("parameter $ref %q is not to #/components/parameters/", ref.Value)
		}
		if p = get(get(get(root, "components"), "parameters"), name); p == nil {
			return [2]string{}, fmt.Errorf("parameter $ref %q: no such component", ref.Value)
		}
	}
	name, in := get(p, "name"), get(p, "in")
	if name == nil || in == nil {
		return [2]string{}, fmt.Errorf("a parameter without name or in")
	}
	return [2]string{name.Value, in.Value}, nil
}
