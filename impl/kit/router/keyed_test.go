package router

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/idempotency"
)

const keyedSpec = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /notes:
    post:
      operationId: CreateNote
      parameters:
        - {name: Idempotency-Key, in: header, schema: {type: string}}
      responses: {"201": {description: created}}
    get:
      operationId: ListNotes
      responses: {"200": {description: ok}}
`

// TestGroup_KeyedOperationsNeedTheStore: a surface whose spec declares Idempotency-Key on an
// operation does not start without an idempotency store (naming the operation), and starts with one.
func TestGroup_KeyedOperationsNeedTheStore(t *testing.T) {
	spec, err := openapi3.NewLoader().LoadFromData([]byte(keyedSpec))
	if err != nil {
		t.Fatal(err)
	}
	err = Group(chi.NewRouter(), Surface{Spec: spec}, func(chi.Router) {})
	if err == nil || !strings.Contains(err.Error(), "POST /notes") || strings.Contains(err.Error(), "GET") {
		t.Fatalf("mounting a keyed operation without a store: %v, want a refusal naming POST /notes alone", err)
	}
	keys := idempotency.New(nil, idempotency.Operations(spec), idempotency.Options{})
	if err := Group(chi.NewRouter(), Surface{Spec: spec, Idempotency: keys}, func(chi.Router) {}); err != nil {
		t.Fatalf("mounting a keyed operation with a store: %v", err)
	}
}
