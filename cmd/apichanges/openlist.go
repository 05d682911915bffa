package main

import (
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/triadhq/triad/api"
)

// The ids of the changes apichanges finds itself, beside oasdiff's: oasdiff ignores
// x-extensible-enum in responses, where the error codes are, so a new code would otherwise be no
// change at all (a patch release, no changelog line), though a client's switch on `code` meets a
// value it never saw. Neither is breaking: the list is open, and a client handles a value it does
// not know by the answer's status (docs/specs.md).
const (
	openListValueAdded   = "open-list-value-added"
	openListValueRemoved = "open-list-value-removed"
)

// openListChanges lists each value added to or removed from an open list (api.Extensible) that
// both documents have at the same place. A list at a new place comes with the schema or
// operation that holds it, which oasdiff reports.
func openListChanges(released, current *yaml.Node) []change {
	before, after := openLists(released), openLists(current)
	var keys []string
	for k := range after {
		if _, ok := before[k]; ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []change
	for _, k := range keys {
		at, was, is := strings.Split(k, "\x00"), before[k], after[k]
		for _, v := range is {
			if !slices.Contains(was, v) {
				out = append(out, openListChange(at, openListValueAdded, "added the value `"+v+"` to the open list"))
			}
		}
		for _, v := range was {
			if !slices.Contains(is, v) {
				out = append(out, openListChange(at, openListValueRemoved, "removed the value `"+v+"` from the open list"))
			}
		}
	}
	return out
}

// openListChange places a change of the list at (its keys from the document's root) the way
// oasdiff places its own: an operation's, or a component's.
func openListChange(at []string, id, what string) change {
	c := change{ID: id, Level: 1, Text: what + " (" + api.Extensible + ")"}
	if len(at) > 3 && at[0] == "paths" && slices.Contains(operationKeys, at[2]) {
		c.Operation, c.Path, c.Section = strings.ToUpper(at[2]), at[1], "paths"
		c.Text += " at `" + strings.Join(at[3:], "/") + "`"
	} else {
		c.Section = strings.Join(at, "/")
	}
	return c
}

// openLists maps the place of each open list in a document (its keys from the root, joined by
// NUL) to its values.
func openLists(root *yaml.Node) map[string][]string {
	lists := map[string][]string{}
	var walk func(n *yaml.Node, at []string)
	walk = func(n *yaml.Node, at []string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i].Value, n.Content[i+1]
				if k == api.Extensible && v.Kind == yaml.SequenceNode {
					var values []string
					for _, s := range v.Content {
						values = append(values, s.Value)
					}
					lists[strings.Join(at, "\x00")] = values
					continue
				}
				walk(v, append(slices.Clip(at), k))
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, append(slices.Clip(at), strconv.Itoa(i)))
			}
		}
	}
	walk(root, nil)
	return lists
}
