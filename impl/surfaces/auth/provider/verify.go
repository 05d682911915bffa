package provider

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"

	"go.opentelemetry.io/otel/attribute"

	"github.com/triadhq/triad/impl/kit/tracing"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// Sender delivers a confirmation message (e-mail, messenger, ...).
type Sender interface {
	Send(address, text string) error
}

// AddressChecker is implemented by a Sender that can tell a well-formed address from one it must
// not send to. The verified provider asks it before anything else, so an address that is not
// exactly one recipient (a list, a group, a display name, no address at all) is refused with 400
// bad_request, never tried (a 502 would tell a caller only that the relay refused it) and never
// sent to.
type AddressChecker interface {
	CheckAddress(address string) error
}

// SenderFunc adapts a function to Sender.
type SenderFunc func(address, text string) error

// Send calls f.
func (f SenderFunc) Send(address, text string) error { return f(address, text) }

// VerifyHandler logs users in by a confirmation token sent to an address they control.
type VerifyHandler struct {
	Params
	// ProviderName is the name it is mounted under.
	ProviderName string
	// Sender delivers the message.
	Sender Sender
	// Site fills {{.Site}} when the request has no aud.
	Site string
	// AudienceAllowed reports whether a request's aud may be named in a message (and the token be
	// for it): the service's audiences, or only Site when it has none, since the aud is text of the
	// caller's choosing that would otherwise be mailed to anyone. Nil allows only Site.
	AudienceAllowed func(aud string) bool
	// Limiter bounds the messages sent (per recipient and per client); NewVerifyHandler sets
	// Params.SendLimiter, or an in-memory limiter with the defaults when that is nil.
	Limiter SendLimiter

	tmpl *template.Template
	used UsedIDs // jti of consumed confirmation tokens until they expire
}

// NewVerifyHandler parses the message template, which may use {{.Address}}, {{.User}}, {{.Token}}
// and {{.Site}}. It is an html/template: values are escaped, so a user name cannot inject markup
// or links into an HTML message sent from this site.
func NewVerifyHandler(p Params, name, msgTmpl string, sender Sender) (*VerifyHandler, error) {
	t, err := template.New(name).Parse(msgTmpl)
	if err != nil {
		return nil, fmt.Errorf("verified provider %s: template: %w", name, err)
	}
	if sender == nil {
		return nil, fmt.Errorf("verified provider %s: nil sender", name)
	}
	used := p.UsedIDs
	if used == nil {
		used = NewMemoryUsedIDs()
	}
	limiter := p.SendLimiter
	if limiter == nil {
		limiter = NewMemorySendLimiter(0, 0, 0, nil)
	}
	return &VerifyHandler{Params: p, ProviderName: name, Sender: sender, Site: p.Issuer, Limiter: limiter, tmpl: t, used: used}, nil
}

// Name returns the provider name.
func (h *VerifyHandler) Name() string { return h.ProviderName }

// MessageData is what the template sees.
type MessageData struct {
	User, Address, Token, Site string
}

type sentJSON struct {
	Status  string `json:"status"`
	Address string `json:"address"`
}

// LoginHandler: with `token` (and `sess`) it logs in; otherwise with `user`, `address`, `aud` and
// `from` it sends a confirmation message.
func (h *VerifyHandler) LoginHandler(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("token") != "" {
		h.confirm(w, r)
		return
	}
	h.send(w, r)
}

func (h *VerifyHandler) send(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	user, address, aud := strings.TrimSpace(q.Get("user")), strings.TrimSpace(q.Get("address")), q.Get("aud")
	if user == "" || address == "" || len(user) > MaxVerifyUser || len(address) > 256 || !printable(user+address) {
		WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "user and address are required (user up to 64, address up to 256 characters, printable)")
		return
	}
	if c, ok := h.Sender.(AddressChecker); ok {
		if err := c.CheckAddress(address); err != nil {
			WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "address must be exactly one recipient, such as alice@example.com")
			return
		}
	}
	if aud == "" && !h.JwtService.AllowedAudience("") {
		// No aud where tokens must name one (Options.Audiences): the confirmation is for this site,
		// the issuer, as the message's {{.Site}} says; refused below when it is not an audience.
		aud = h.Site
	}
	if !h.audienceAllowed(aud) {
		WriteError(w, r, http.StatusForbidden, CodeAudience, "this site is not an allowed audience")
		return
	}
	wait, err := h.Limiter.Allow(r.Context(), address, r.RemoteAddr)
	if err != nil {
		web.Internal(w, r, fmt.Errorf("verified %s: send limiter: %w", h.ProviderName, err))
		return
	}
	if wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		WriteError(w, r, http.StatusTooManyRequests, CodeTooManyConfirmations,
			"too many confirmation messages to this address or from this client; retry later")
		return
	}
	tok, err := h.JwtService.HandshakeToken(aud, token.Handshake{ID: user + "::" + address, From: h.SafeFrom(q.Get("from")), Provider: h.ProviderName})
	if err != nil {
		web.Internal(w, r, err)
		return
	}
	site := aud
	if site == "" {
		site = h.Site
	}
	var buf bytes.Buffer
	if err := h.tmpl.Execute(&buf, MessageData{User: user, Address: address, Token: tok, Site: site}); err != nil {
		web.Internal(w, r, fmt.Errorf("verified %s: message template: %w", h.ProviderName, err))
		return
	}
	_, sent := tracing.Start(r.Context(), "send "+h.ProviderName, attribute.String("auth.provider", h.ProviderName))
	err = h.Sender.Send(address, buf.String())
	sent(err)
	if err != nil {
		// Not the address: a warning is no place for personal data (the request id finds the request).
		h.log().WarnContext(r.Context(), "verified login: send", "provider", h.ProviderName, "err", err)
		WriteError(w, r, http.StatusBadGateway, CodeSendFailed, "the confirmation message could not be sent")
		return
	}
	web.WriteJSON(w, http.StatusOK, sentJSON{Status: StatusSent, Address: address})
}

// MaxVerifyUser is the longest user name (bytes) a verified login takes: the name is text of the
// caller's choosing in a message sent to someone else, so it stays short.
const MaxVerifyUser = 64

// printable reports whether s holds no control or format characters (line breaks, which would
// reach mail headers, and bidirectional overrides, which would disguise the text around them).
func printable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) })
}

// audienceAllowed applies AudienceAllowed, or allows only Site; "" (no aud: Site) always passes.
func (h *VerifyHandler) audienceAllowed(aud string) bool {
	if aud == "" {
		return true
	}
	if !h.JwtService.AllowedAudience(aud) {
		return false
	}
	if h.AudienceAllowed != nil {
		return h.AudienceAllowed(aud)
	}
	return aud == h.Site
}

func (h *VerifyHandler) confirm(w http.ResponseWriter, r *http.Request) {
	c, err := h.JwtService.ParseHandshake(r.URL.Query().Get("token"))
	// A confirmation is valid only at the provider that sent it: another verified provider (say an
	// SMS one whose addresses the caller controls) must not log users in under this one's name.
	if err != nil || c.Handshake.ID == "" || c.Handshake.Provider != h.ProviderName || c.ID == "" || c.ExpiresAt == nil {
		WriteError(w, r, http.StatusForbidden, CodeBadConfirmation, "confirmation token invalid or expired")
		return
	}
	user, address, ok := strings.Cut(c.Handshake.ID, "::")
	if !ok {
		WriteError(w, r, http.StatusForbidden, CodeBadConfirmation, "confirmation token invalid or expired")
		return
	}
	first, err := h.used.Use(r.Context(), c.ID, c.ExpiresAt.Time)
	if err != nil {
		web.Internal(w, r, fmt.Errorf("verified %s: used ids: %w", h.ProviderName, err))
		return
	}
	if !first {
		WriteError(w, r, http.StatusForbidden, CodeConfirmationUsed, "confirmation token already used")
		return
	}
	u := token.User{Name: user, ID: address}
	if strings.Contains(address, "@") {
		u.Email = address
	}
	Finish(w, r, h.Params, h.ProviderName, LoginResult{User: u, Aud: c.Aud(), Session: sessionParam(r), From: c.Handshake.From})
}

// AuthHandler is unused: confirmation goes through the login URL.
func (h *VerifyHandler) AuthHandler(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "this provider has no callback")
}

// LogoutHandler clears the session cookies.
func (h *VerifyHandler) LogoutHandler(w http.ResponseWriter, _ *http.Request) {
	Logout(w, h.JwtService)
}
