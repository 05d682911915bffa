package provider

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/triadhq/triad/impl/auth/token"
	"github.com/triadhq/triad/impl/web"
)

// Sender delivers a confirmation message (e-mail, messenger, ...).
type Sender interface {
	Send(address, text string) error
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
	return &VerifyHandler{Params: p, ProviderName: name, Sender: sender, tmpl: t, used: used}, nil
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
	if user == "" || address == "" || len(user) > 64 || len(address) > 256 || strings.ContainsAny(user+address, "\r\n") {
		WriteError(w, r, http.StatusBadRequest, CodeBadRequest, "user and address are required (user up to 64, address up to 256 characters)")
		return
	}
	if !h.JwtService.AllowedAudience(aud) {
		WriteError(w, r, http.StatusForbidden, CodeAudience, "this site is not an allowed audience")
		return
	}
	tok, err := h.JwtService.HandshakeToken(aud, token.Handshake{ID: user + "::" + address, From: h.SafeFrom(q.Get("from")), Provider: h.ProviderName})
	if err != nil {
		web.Internal(w, r, nil, err)
		return
	}
	site := aud
	if site == "" {
		site = h.Site
	}
	var buf bytes.Buffer
	if err := h.tmpl.Execute(&buf, MessageData{User: user, Address: address, Token: tok, Site: site}); err != nil {
		h.log().Error("verified login: template", "provider", h.ProviderName, "err", err)
		web.Internal(w, r, nil, err)
		return
	}
	if err := h.Sender.Send(address, buf.String()); err != nil {
		h.log().Warn("verified login: send", "provider", h.ProviderName, "address", address, "err", err)
		WriteError(w, r, http.StatusBadGateway, CodeSendFailed, "the confirmation message could not be sent")
		return
	}
	web.WriteJSON(w, http.StatusOK, sentJSON{Status: StatusSent, Address: address})
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
		web.Internal(w, r, nil, fmt.Errorf("verified %s: used ids: %w", h.ProviderName, err))
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
