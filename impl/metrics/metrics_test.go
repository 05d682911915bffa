package metrics

import "testing"

func TestOperationAndSurface(t *testing.T) {
	tests := []struct{ pattern, op, surface string }{
		{"/orders/{id}/take", "/orders/{id}/take", "orders"},
		{"/oauth/token", "/oauth/token", "orders"},
		{"/api/brands/{id}", "/api/brands/{id}", "brands"},
		{"/auth/*", Unmatched, Unmatched}, // a mounted router's catch-all is not a route
		{"/avatar/{id}", "/avatar/{id}", "auth"},
		{"/healthz", "/healthz", "platform"},
		{"", Unmatched, Unmatched},
	}
	for _, tt := range tests {
		op := Operation(tt.pattern)
		if op != tt.op || Surface(op) != tt.surface {
			t.Errorf("%q: operation %q surface %q, want %q %q", tt.pattern, op, Surface(op), tt.op, tt.surface)
		}
	}
}
