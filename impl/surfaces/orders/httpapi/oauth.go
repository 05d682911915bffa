package httpapi

import (
	"context"

	"github.com/triadhq/triad/impl/surfaces/orders"
)

// authenticate is the password check of POST /oauth/token, the edge's OAuth 2.0 password grant
// (tokenedge.PasswordGrant: RFC 6749's parameters, client authentication and §5.2 refusals, the
// login guard and the device cookie): the orders user username with password is the principal its
// token names; an unknown user and a wrong password are both domainerr.InvalidCredentials.
func (a *API) authenticate(ctx context.Context, username, password string) (orders.Principal, error) {
	u, err := a.svc.Authenticate(ctx, username, password)
	if err != nil {
		return orders.Principal{}, err
	}
	return orders.Principal{ID: u.ID, Username: u.Username, Type: u.Type}, nil
}
