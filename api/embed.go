// Package api embeds the OpenAPI documents, the source of truth for the three HTTP surfaces, so the
// server can publish them at /openapi/{name}.yaml exactly as they are in the repository.
package api

import "embed"

// FS holds auth.yaml, brands.yaml and orders.yaml.
//
//go:embed *.yaml
var FS embed.FS
