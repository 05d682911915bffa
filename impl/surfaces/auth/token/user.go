package token

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
)

// User is the identity carried in a token and placed in the request context by the middleware.
type User struct {
	// Name is the display name given by the provider.
	Name string `json:"name"`
	// ID is "<provider>_<sha1 of the provider's user id>", so raw ids never leave the server and the
	// provider that issued the identity can be read back.
	ID string `json:"id"`
	// Picture is the full URL of the proxied avatar.
	Picture string `json:"picture,omitempty"`
	// Audience is the aud (site) the token was issued for.
	Audience string `json:"aud,omitempty"`
	// IP is a hash of the user's IP address; the ClaimsUpdater fills it when wanted.
	IP string `json:"ip,omitempty"`
	// Email is the user's e-mail when a provider or the ClaimsUpdater supplies it.
	Email string `json:"email,omitempty"`
	// Attributes holds extra data; use the typed getters and setters.
	Attributes map[string]any `json:"attrs,omitempty"`
	// Role names the user's role for RBAC and basic-auth users.
	Role string `json:"role,omitempty"`
}

// attrAdmin is the attribute the Admin middleware checks.
const attrAdmin = "admin"

// SetBoolAttr sets a boolean attribute.
func (u *User) SetBoolAttr(key string, val bool) { u.setAttr(key, val) }

// SetStrAttr sets a string attribute.
func (u *User) SetStrAttr(key, val string) { u.setAttr(key, val) }

// SetSliceAttr sets a list-of-strings attribute.
func (u *User) SetSliceAttr(key string, val []string) { u.setAttr(key, val) }

func (u *User) setAttr(key string, val any) {
	if u.Attributes == nil {
		u.Attributes = map[string]any{}
	}
	u.Attributes[key] = val
}

// BoolAttr returns a boolean attribute, false when missing or of another type.
func (u User) BoolAttr(key string) bool {
	v, _ := u.Attributes[key].(bool)
	return v
}

// StrAttr returns a string attribute, "" when missing or of another type.
func (u User) StrAttr(key string) string {
	v, _ := u.Attributes[key].(string)
	return v
}

// SliceAttr returns a list-of-strings attribute. It accepts both a []string set in this process and
// the []any a token's JSON decodes to.
func (u User) SliceAttr(key string) []string {
	switch v := u.Attributes[key].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, e := range v {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// SetAdmin marks the user as an administrator (or not).
func (u *User) SetAdmin(admin bool) { u.SetBoolAttr(attrAdmin, admin) }

// IsAdmin reports whether the user is an administrator: the admin attribute, or the role "admin".
func (u User) IsAdmin() bool { return u.BoolAttr(attrAdmin) || u.Role == "admin" }

// Provider returns the provider name encoded in the ID ("github" for "github_3f2a…"), or "".
func (u User) Provider() string {
	i := strings.LastIndexByte(u.ID, '_')
	if i <= 0 {
		return ""
	}
	return u.ID[:i]
}

// HashID returns the hex SHA-1 of a provider's raw user id. SHA-1 is used as a stable, short
// pseudonym, not for security: it keeps raw ids (often e-mails or phone-like numbers) out of tokens.
func HashID(raw string) string {
	h := sha1.Sum([]byte(raw))
	return hex.EncodeToString(h[:])
}

// UserID builds the ID of a user of provider from the provider's raw id.
func UserID(provider, raw string) string { return provider + "_" + HashID(raw) }
