// Package schema embeds the database migrations so the server binary applies them at start.
package schema

import "embed"

// FS holds the goose migrations, numbered and applied in order.
//
//go:embed *.sql
var FS embed.FS
