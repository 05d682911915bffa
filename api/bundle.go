package api

import (
	"bytes"
	"fmt"
	"io/fs"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// SharedFile is the file of the components every surface shares, relative to api/; a surface's
// spec refers to one as SharedFile + "#/components/<section>/<Name>".
const SharedFile = "shared/components.yaml"

// Bundle returns surface name's spec made self-contained: every reference into SharedFile points
// to the surface's own components instead, where the referenced component (and every shared
// component it refers to, transitively) is copied under the same name. A shared component's
// internal reference that SharedFile does not define (ErrorCode, the codes ApiError.code lists)
// so resolves to the surface's own definition. The surface's text is otherwise kept as written,
// comments included. It fails, naming the component, when the surface defines a component of a
// name SharedFile defines, lacks ErrorCode, refers to a shared component that does not exist, or
// refers to a shared component as if it were its own (#/components/...).
func Bundle(name string) ([]byte, error) { return BundleFrom(Sources, name) }

// BundleFrom is Bundle over the specs in src, a directory laid out as api/ is (the specs of
// another checkout: cmd/apichanges bundles the one it releases).
func BundleFrom(src fs.FS, name string) ([]byte, error) {
	surface, err := fs.ReadFile(src, name+".yaml")
	if err != nil {
		return nil, err
	}
	shared, err := fs.ReadFile(src, SharedFile)
	if err != nil {
		return nil, err
	}
	return bundle(name+".yaml", surface, shared)
}

// bundle is Bundle over the documents' bytes; file names the surface's document in errors.
func bundle(file string, surface, shared []byte) ([]byte, error) {
	var doc, lib yaml.Node
	if err := yaml.Unmarshal(surface, &doc); err != nil {
		return nil, fmt.Errorf("api/%s: %w", file, err)
	}
	if err := yaml.Unmarshal(shared, &lib); err != nil {
		return nil, fmt.Errorf("api/%s: %w", SharedFile, err)
	}
	if len(doc.Content) != 1 || len(lib.Content) != 1 {
		return nil, fmt.Errorf("api/%s or api/%s: not one YAML document", file, SharedFile)
	}
	root, libRoot := doc.Content[0], lib.Content[0]
	own := member(root, "components")
	if own == nil {
		return nil, fmt.Errorf("api/%s: no components", file)
	}
	libComponents := member(libRoot, "components")
	if libComponents == nil {
		return nil, fmt.Errorf("api/%s: no components", SharedFile)
	}

	// A name defined on both sides would make the copied references ambiguous.
	for i := 0; i+1 < len(libComponents.Content); i += 2 {
		section := libComponents.Content[i].Value
		mine := member(own, section)
		for j := 0; j+1 < len(libComponents.Content[i+1].Content); j += 2 {
			n := libComponents.Content[i+1].Content[j].Value
			if mine != nil && member(mine, n) != nil {
				return nil, fmt.Errorf("api/%s: components.%s.%s is also defined in api/%s; use the shared one or rename it", file, section, n, SharedFile)
			}
		}
	}
	if member(member(own, "schemas"), "ErrorCode") == nil {
		return nil, fmt.Errorf("api/%s: components.schemas.ErrorCode is missing: every surface lists the codes it sends in its own ErrorCode enum, which the shared ApiError.code refers to", file)
	}

	// Rewrite the surface's references into the shared file and queue their targets; copy each
	// target once, queueing the shared components it refers to in turn.
	prefix := SharedFile + "#/components/"
	var queue []string
	copied := map[string]bool{}
	var badRef error
	eachRef(root, func(ref *yaml.Node) {
		if target, ok := strings.CutPrefix(ref.Value, prefix); ok {
			ref.Value = "#/components/" + target
			ref.Style = yaml.DoubleQuotedStyle
			queue = append(queue, target)
		} else if !strings.HasPrefix(ref.Value, "#") && badRef == nil {
			badRef = fmt.Errorf("api/%s: $ref %q: a spec refers only to itself or to %s", file, ref.Value, prefix)
		} else if local, ok := strings.CutPrefix(ref.Value, "#/components/"); ok && badRef == nil {
			// A shared component named as if it were the surface's own would resolve only when
			// some other reference happened to copy it in.
			s, m, _ := strings.Cut(local, "/")
			if member(member(own, s), m) == nil && member(member(libComponents, s), m) != nil {
				badRef = fmt.Errorf("api/%s: $ref %q: %s is shared; refer to it as %s%s", file, ref.Value, m, prefix, local)
			}
		}
	})
	if badRef != nil {
		return nil, badRef
	}
	for len(queue) > 0 {
		target := queue[0]
		queue = queue[1:]
		if copied[target] {
			continue
		}
		copied[target] = true
		section, n, ok := strings.Cut(target, "/")
		src := member(member(libComponents, section), n)
		if !ok || src == nil {
			return nil, fmt.Errorf("api/%s refers to %s%s, which api/%s does not define", file, prefix, target, SharedFile)
		}
		c := deepCopy(src)
		eachRef(c, func(ref *yaml.Node) {
			t, internal := strings.CutPrefix(ref.Value, "#/components/")
			if !internal {
				return
			}
			s, m, _ := strings.Cut(t, "/")
			if member(member(libComponents, s), m) != nil {
				queue = append(queue, t)
			}
		})
		dst := member(own, section)
		if dst == nil {
			dst = &yaml.Node{Kind: yaml.MappingNode}
			own.Content = append(own.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: section}, dst)
		}
		dst.Content = append(dst.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: n}, c)
	}

	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("api/%s: %w", file, err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	header := "# Generated by `make generate` from api/" + file + " and api/" + SharedFile + " (package api, Bundle). DO NOT EDIT.\n"
	return append([]byte(header), out.Bytes()...), nil
}

// member is the value of key in mapping m, or nil.
func member(m *yaml.Node, key string) *yaml.Node {
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

// eachRef calls fn with the value node of every $ref under n.
func eachRef(n *yaml.Node, fn func(*yaml.Node)) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "$ref" && n.Content[i+1].Kind == yaml.ScalarNode {
				fn(n.Content[i+1])
			}
		}
	}
	for _, c := range n.Content {
		eachRef(c, fn)
	}
}

// deepCopy copies n and everything under it, so a component copied into two documents (or twice)
// shares no node.
func deepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = deepCopy(x)
	}
	return &c
}
