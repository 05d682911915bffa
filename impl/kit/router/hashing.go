package router

import (
	"net/http"

	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
)

// HashingClient tags the context of requests that may hash a password (POSTs: logins,
// registrations, password changes) with the client's network, so each hasher shares its workers and
// queue out per client and one flooding host cannot shed everyone else (password.WithClient). It
// runs after web.ClientAddr, which settles the client's address behind trusted proxies.
func HashingClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			r = r.WithContext(password.WithClient(r.Context(), throttle.AddressKey(r.RemoteAddr)))
		}
		next.ServeHTTP(w, r)
	})
}
