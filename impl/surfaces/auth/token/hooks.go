package token

// SecretReader returns the signing secret for an audience, so each site may have its own secret.
type SecretReader interface {
	Get(aud string) (string, error)
}

// SecretFunc adapts a function to SecretReader.
type SecretFunc func(aud string) (string, error)

// Get calls f.
func (f SecretFunc) Get(aud string) (string, error) { return f(aud) }

// ClaimsUpdater changes claims when a token is created or refreshed (never per request): the place
// to set ip, e-mail, admin status, roles, or a "blocked" attribute for the Validator to check.
type ClaimsUpdater interface {
	Update(claims Claims) Claims
}

// ClaimsUpdFunc adapts a function to ClaimsUpdater.
type ClaimsUpdFunc func(claims Claims) Claims

// Update calls f.
func (f ClaimsUpdFunc) Update(claims Claims) Claims { return f(claims) }

// Validator checks a token on each request wrapped by the Auth middleware; false rejects it.
type Validator interface {
	Validate(token string, claims Claims) bool
}

// ValidatorFunc adapts a function to Validator.
type ValidatorFunc func(token string, claims Claims) bool

// Validate calls f.
func (f ValidatorFunc) Validate(token string, claims Claims) bool { return f(token, claims) }
