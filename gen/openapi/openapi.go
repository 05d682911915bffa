// Package openapi holds the bundled specs: api/<surface>.yaml with the shared components it uses
// (api/shared/components.yaml) copied in, one self-contained document per surface. They are what
// the server publishes at /openapi, what oapi-codegen and the TypeScript SDK generate from, and
// what lint, Prism and the tests read. Never edit the *.yaml files; change api/ and run
// `make generate`.
package openapi

import "embed"

//go:generate go run ../../cmd/bundlespecs -out .

// FS holds one <surface>.yaml per surface.
//
//go:embed *.yaml
var FS embed.FS
