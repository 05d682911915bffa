package provider

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// CustomOAuth2 configures an OAuth 2.0 provider the service has no built-in for: any third party,
// or the local server of package oauthserver. Several clients of one third party can be registered
// under different names.
type CustomOAuth2 struct {
	// Name is the provider's path segment and user-id prefix; it may not be a built-in name.
	Name string
	// Cid and Csecret are the client id and secret registered at the third party.
	Cid, Csecret string
	// AuthURL and TokenURL are the authorization and token endpoints.
	AuthURL, TokenURL string
	// AuthStyle says how the client authenticates at the token endpoint; zero auto-detects.
	AuthStyle oauth2.AuthStyle
	// InfoURL is the API method returning the logged-in user (called with a Bearer token).
	InfoURL string
	// MapUserFn converts the InfoURL response into a user whose ID is the provider's raw id (the
	// service derives the user id from it, Options.UserIDFunc), or with KeepID the user's id itself.
	// Nil reads the "id", "name" and "picture" fields.
	MapUserFn func(data UserData, body []byte) token.User
	// KeepID takes MapUserFn's ID as the user's id, as it is: neither Options.UserIDFunc nor the
	// default "<name>_" + SHA-1 derivation changes it. It is go-pkgz/auth's convention (its
	// MapUserFn returned the final id, e.g. "custom123_" + the provider's id), so a site moving
	// from it keeps its custom providers' user ids by setting KeepID and keeping its MapUserFn. The
	// function must then give ids that cannot collide with other providers' (a prefix of its own).
	KeepID bool
	// Scopes are the minimal scopes needed to read the user info.
	Scopes []string
	// PKCE sends an S256 code challenge; turn it on when the provider supports RFC 7636.
	PKCE bool
}

// Errors of NewCustomOAuth2.
var (
	ErrBuiltinName = errors.New("provider: name belongs to a built-in provider")
	ErrCustomName  = errors.New("provider: custom provider name must be 1-32 of a-z, 0-9, '_' or '-'")
)

var customName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,31}$`)

// NewCustomOAuth2 builds a custom OAuth 2.0 provider on the generic machinery. p supplies the
// service parts (token service, URL, avatar saver); c's Cid and Csecret replace p's.
func NewCustomOAuth2(p Params, c CustomOAuth2) (*OAuth2Handler, error) {
	if !customName.MatchString(c.Name) {
		return nil, fmt.Errorf("%w: %q", ErrCustomName, c.Name)
	}
	if IsBuiltinName(c.Name) {
		return nil, fmt.Errorf("%w: %q", ErrBuiltinName, c.Name)
	}
	if c.Cid == "" || c.Csecret == "" || c.AuthURL == "" || c.TokenURL == "" || c.InfoURL == "" {
		return nil, fmt.Errorf("provider %s: Cid, Csecret, AuthURL, TokenURL and InfoURL are required", c.Name)
	}
	mapUser := c.MapUserFn
	if mapUser == nil {
		mapUser = func(d UserData, _ []byte) token.User {
			return token.User{ID: d.Value("id"), Name: d.Value("name"), Picture: d.Value("picture")}
		}
	}
	p.Cid, p.Csecret = c.Cid, c.Csecret
	if p.HTTPClient == nil {
		client, err := loopbackClient(c.Name, c.TokenURL, c.InfoURL)
		if err != nil {
			return nil, err
		}
		p.HTTPClient = client
	}
	return NewOAuth2Handler(p, OAuth2Config{
		Name:     c.Name,
		Endpoint: oauth2.Endpoint{AuthURL: c.AuthURL, TokenURL: c.TokenURL, AuthStyle: c.AuthStyle},
		Scopes:   c.Scopes,
		InfoURL:  c.InfoURL,
		MapUser:  mapUser,
		PKCE:     c.PKCE,
		KeepID:   c.KeepID,
	}), nil
}

// loopbackClient is the client of a custom provider left on the library's guarded default
// (Params.HTTPClient nil) whose token and user-info endpoints the site wrote down: the guard
// refuses every non-public address, but an endpoint given as a loopback address or "localhost"
// names a server on this machine, such as the local OAuth 2.0 server of package oauthserver run
// beside the site (the seed's local-server program), so exactly those addresses and ports are
// let through, and nothing else. Nil (the default client) when no endpoint is on loopback.
// An endpoint at another non-public address (10.0.0.5, a link-local one) is refused here, naming
// the option that reaches it, rather than at every login with a 502.
func loopbackClient(name string, endpoints ...string) (*http.Client, error) {
	permit := map[netip.AddrPort]bool{}
	for _, e := range endpoints {
		u, err := url.Parse(e)
		if err != nil || u.Hostname() == "" {
			return nil, fmt.Errorf("provider %s: endpoint %q is not an absolute URL", name, e)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		pn, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("provider %s: endpoint %q has no usable port", name, e)
		}
		var addrs []netip.Addr
		if host := u.Hostname(); strings.EqualFold(host, "localhost") {
			addrs = []netip.Addr{netip.IPv6Loopback(), netip.MustParseAddr("127.0.0.1")}
		} else if a, err := netip.ParseAddr(host); err == nil {
			if !a.Unmap().IsLoopback() && !outbound.PublicAddr(a) {
				return nil, fmt.Errorf("provider %s: endpoint %s is at %s, a non-public address the outbound guard refuses; "+
					"to reach it set Options.HTTPClient (outbound.New(outbound.Options{AllowPrivate: true}), or a client of your own)",
					name, e, a)
			}
			if a.Unmap().IsLoopback() {
				addrs = []netip.Addr{a.Unmap()}
			}
		}
		for _, a := range addrs {
			permit[netip.AddrPortFrom(a, uint16(pn))] = true
		}
	}
	if len(permit) == 0 {
		return nil, nil
	}
	return outbound.New(outbound.Options{Permit: func(ap netip.AddrPort) bool {
		return permit[netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())]
	}}), nil
}
