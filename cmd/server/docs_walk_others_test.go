package main

import (
	"strings"

	"github.com/triadhq/triad/api"
)

// walkOthers walks the page of each surface beyond the three walked by hand (a surface `make
// new-surface` made): Authorize `bearerAuth` with a token of the dev data's user of the source the
// surface takes (surfaceBearer), then every operation with its defaults, path by path, GET before
// POST, PUT, PATCH and DELETE (docs/specs.md), each answering its first documented success. The
// skeleton's examples hold up in that order on a fresh database: the list (empty), the create (item
// 1), the read and the delete of item 1.
func (w *docsWalk) walkOthers(base string) {
	w.t.Helper()
	var bearers map[string]func() string
	for _, name := range api.Names() {
		if handWalked(name) {
			continue
		}
		doc, err := api.Load(name)
		if err != nil {
			w.t.Fatal(err)
		}
		if bearers == nil {
			bearers = devBearers(w.t, base)
		}
		token := surfaceBearer(w.t, base, name, doc, bearers)
		ops := orderedOperations(doc)
		w.page(name, ops[0].OperationID)
		w.authorize("bearerAuth", token())
		for _, op := range ops {
			w.try(op.OperationID, firstSuccess(op), "")
		}
	}
}

// firstSuccess is the lowest 2xx status op documents ("200" when it documents none).
func firstSuccess(op operation) string {
	best := ""
	for status := range op.Responses.Map() {
		if strings.HasPrefix(status, "2") && (best == "" || status < best) {
			best = status
		}
	}
	if best == "" {
		return "200"
	}
	return best
}
