package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// statusIn finds the response status in oasdiff's texts ("... for the response status `400`",
// "... to the response with the `400` status"), so one change repeated for each status of an
// operation is one line naming them all.
var statusIn = regexp.MustCompile("(response status |response with the )`(\\d{3})`")

// entry is one line of a changelog: a change, or the same change under several statuses.
type entry struct {
	where string // "GET /orders/{id}", or the section of a change outside the paths
	line  string
	level int
}

// entries groups cs into changelog lines, in oasdiff's order of first appearance.
func entries(cs []change) []entry {
	type key struct{ where, id, text string }
	var order []key
	statuses := map[key][]string{}
	levels := map[key]int{}
	for _, c := range cs {
		where := strings.TrimSpace(c.Operation + " " + c.Path)
		if where == "" {
			where = c.Section
		}
		text, status := c.Text, ""
		if m := statusIn.FindStringSubmatchIndex(text); m != nil {
			status = text[m[4]:m[5]]
			text = text[:m[4]-1] + "%s" + text[m[5]+1:]
		}
		k := key{where, c.ID, text}
		if _, seen := statuses[k]; !seen {
			order = append(order, k)
			statuses[k] = nil
		}
		if status != "" && !slices.Contains(statuses[k], status) {
			statuses[k] = append(statuses[k], status)
		}
		levels[k] = max(levels[k], c.Level)
	}
	out := make([]entry, 0, len(order))
	for _, k := range order {
		text := k.text
		if strings.Contains(text, "%s") {
			s := statuses[k]
			slices.Sort(s)
			text = strings.Replace(text, "%s", "`"+strings.Join(s, "`, `")+"`", 1)
		}
		line := text + " [" + k.id + "]"
		switch {
		case levels[k] >= levelBreaking:
			line = "**breaking:** " + line
		case levels[k] == 2:
			line = "warning: " + line
		}
		out = append(out, entry{where: k.where, line: line, level: levels[k]})
	}
	return out
}

// section renders the changelog section of release to (the changes from from to it).
func section(to, from version, date string, cs []change) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s (%s)\n\n", to, date)
	if len(cs) == 0 {
		fmt.Fprintf(&b, "No change of the API since %s (wording only).\n", from)
		return b.String()
	}
	fmt.Fprintf(&b, "Changes since %s, as oasdiff's changelog reports them (and apichanges, for the values of open lists):\n", from)
	// One heading per operation, in the order oasdiff first names it; breaking lines first.
	var wheres []string
	byWhere := map[string][]entry{}
	for _, e := range entries(cs) {
		if _, seen := byWhere[e.where]; !seen {
			wheres = append(wheres, e.where)
		}
		byWhere[e.where] = append(byWhere[e.where], e)
	}
	for _, w := range wheres {
		fmt.Fprintf(&b, "\n### %s\n\n", w)
		es := byWhere[w]
		slices.SortStableFunc(es, func(a, b entry) int { return b.level - a.level })
		for _, e := range es {
			fmt.Fprintf(&b, "- %s\n", e.line)
		}
	}
	return b.String()
}

// changelogHead starts every surface's changelog.
func changelogHead(surface string) string {
	return fmt.Sprintf("# The %s API's changelog\n\n"+
		"Every release of api/%s.yaml (its `info.version`), newest first. `make release-specs` writes each\n"+
		"section from oasdiff's changelog against the release before (api/released/%s.yaml); a line marked\n"+
		"**breaking** is a change a client written against the earlier release may not survive, and such a\n"+
		"change comes only with a new major version. See docs/specs.md, \"Versions and breaking changes\".\n",
		surface, surface, surface)
}

// sectionOf returns the section of version v in a changelog ("" when it has none).
func sectionOf(changelog string, v version) string {
	head := "## " + v.String() + " "
	start := -1
	for i := 0; i < len(changelog); {
		if strings.HasPrefix(changelog[i:], head) && (i == 0 || changelog[i-1] == '\n') {
			start = i
			break
		}
		n := strings.IndexByte(changelog[i:], '\n')
		if n < 0 {
			break
		}
		i += n + 1
	}
	if start < 0 {
		return ""
	}
	rest := changelog[start+len(head):]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		return changelog[start : start+len(head)+end+1]
	}
	return changelog[start:]
}

// putSection writes sec into the changelog at path, replacing the section of the same version or,
// when there is none, above the newest one.
func putSection(path, surface string, v version, sec string) error {
	body, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	log := string(body)
	if log == "" {
		log = changelogHead(surface)
	}
	if old := sectionOf(log, v); old != "" {
		log = strings.Replace(log, old, sec, 1)
	} else if i := strings.Index(log, "\n## "); i >= 0 {
		log = log[:i+1] + sec + "\n" + log[i+1:]
	} else {
		log = strings.TrimRight(log, "\n") + "\n\n" + sec
	}
	return os.WriteFile(path, []byte(log), 0o644)
}
