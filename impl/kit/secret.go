package kit

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
)

// Secret is a setting that never appears in logs (a client secret, a password): a surface's
// Settings type their secrets so, and the server's configuration, which holds those Settings
// and is logged whole at start, shows them masked. string(s) is the value.
type Secret string

// LogValue masks the secret in slog output.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON masks the secret where a JSON log handler marshals the whole config.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// String masks the secret in fmt output too: empty stays empty so a missing secret is visible.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "***"
}

// Secrets is a list setting whose items are secrets (name:id:secret entries): masked as a whole.
type Secrets []string

// LogValue masks the list in slog output.
func (s Secrets) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalJSON masks the list where a JSON log handler marshals the whole config.
func (s Secrets) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// String masks the list in fmt output too: empty stays empty so a missing list is visible.
func (s Secrets) String() string {
	if len(s) == 0 {
		return ""
	}
	return "***"
}

// CredURI is a setting's URI that may carry credentials (a store's user:password@host). Logs
// show where it points, with any password replaced by "xxxxx", because an operator needs to see
// which store a server uses but the log must not become a way to read its password.
type CredURI string

// String is the URI with its password redacted; a plain path or an unparsable value is shown only
// when it cannot hold userinfo.
func (u CredURI) String() string {
	if !strings.Contains(string(u), "@") {
		return string(u)
	}
	parsed, err := url.Parse(string(u))
	if err != nil || parsed.User == nil {
		return "***"
	}
	return parsed.Redacted()
}

// LogValue redacts the password in slog output.
func (u CredURI) LogValue() slog.Value { return slog.StringValue(u.String()) }

// MarshalJSON redacts the password where a JSON log handler marshals the whole config.
func (u CredURI) MarshalJSON() ([]byte, error) { return json.Marshal(u.String()) }
