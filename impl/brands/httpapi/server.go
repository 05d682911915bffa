package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/brands"
	"github.com/triadhq/triad/impl/throttle"
	"github.com/triadhq/triad/impl/web"
)

// The success messages are the original API's, word for word.
const (
	msgPasswordChanged = "Password successfully changed"
	msgProfileChanged  = "Profile successfully changed."
	msgLoggedOut       = "You have successfully logged out."
	msgSubscribed      = "Successfully Subscribed"
	msgAlreadySub      = "Already Subscribed"
	msgUnsubscribed    = "Successfully Unsubscribed"
	msgNotSubscribed   = "Not Subscribed"
	msgBrandDeleted    = "Brand successfully deleted."
)

// codeTooManyAttempts is the Error code of a login refused by the failed-login limit.
const codeTooManyAttempts = "too_many_attempts"

// codeServerBusy is the Error code of a 503 given when the password hasher's queue is full.
const codeServerBusy = "server_busy"

// noStore is the Cache-Control of every answer that carries an access token: no browser or shared
// cache may keep a credential.
const noStore = "no-store"

// server implements the generated strict interface by calling brands.Service.
type server struct {
	svc    *brands.Service
	logins *throttle.Limiter
}

var _ brandsapi.StrictServerInterface = (*server)(nil)

// errNoBody is a body in neither JSON nor form encoding; the spec validator refuses those first.
var errNoBody = &brands.ValidationError{Problems: []brands.FieldProblem{{Field: "body", Message: "send a form or JSON body"}}}

func (s *server) RegisterBrandsUser(ctx context.Context, req brandsapi.RegisterBrandsUserRequestObject) (brandsapi.RegisterBrandsUserResponseObject, error) {
	body := req.JSONBody
	if body == nil {
		body = req.FormdataBody
	}
	if body == nil {
		return refuse[brandsapi.RegisterBrandsUserResponseObject](ctx, errNoBody)
	}
	u, tok, err := s.svc.Register(ctx, body.Name, body.Email, body.Password)
	if err != nil {
		return refuse[brandsapi.RegisterBrandsUserResponseObject](ctx, err)
	}
	return brandsapi.RegisterBrandsUser201JSONResponse{
		Body: brandsapi.RegisteredUser{
			UnderscoreId:  u.ID,
			Token:         tok,
			Email:         u.Email,
			Name:          u.Name,
			Subscriptions: []brandsapi.Brand{},
			CreatedAt:     u.CreatedAt.UTC().Format(brands.TimeLayout),
		},
		Headers: brandsapi.RegisterBrandsUser201ResponseHeaders{CacheControl: noStore},
	}, nil
}

func (s *server) LoginUser(ctx context.Context, req brandsapi.LoginUserRequestObject) (brandsapi.LoginUserResponseObject, error) {
	body := req.JSONBody
	if body == nil {
		body = req.FormdataBody
	}
	if body == nil {
		return refuse[brandsapi.LoginUserResponseObject](ctx, errNoBody)
	}
	// Brute-force guard: an email that failed too often from this address is refused before its
	// password is checked, so the answer cannot tell a right password from a wrong one and the
	// attacker's requests cost no argon2 work. Reserve counts this try before the check, so
	// requests sent in parallel cannot all slip in while the first are being hashed; only a wrong
	// password keeps it (see impl/throttle). Unknown emails count alike: otherwise the 429 would
	// tell which are registered.
	res, err := s.logins.Reserve(ctx, throttle.LoginKey(body.Email, remoteAddr(ctx)))
	if err != nil {
		return nil, err
	}
	if res.Blocked {
		secs := throttle.RetryAfterSeconds(res.RetryAfter)
		return refusal{status: http.StatusTooManyRequests, retryAfter: secs, body: web.Error{Code: codeTooManyAttempts,
			Message: fmt.Sprintf("too many failed logins; try again in %d seconds", secs), RequestID: web.RequestID(ctx)}}, nil
	}
	tok, err := s.svc.Login(ctx, body.Email, body.Password)
	if errors.Is(err, brands.ErrInvalidCredentials) {
		return refuse[brandsapi.LoginUserResponseObject](ctx, err)
	}
	if err != nil {
		// The password was not checked (database down, request cancelled): not a failed guess.
		_ = res.Release()
		return refuse[brandsapi.LoginUserResponseObject](ctx, err)
	}
	// Best effort: if forgetting fails, the earlier failures simply count until the window ends.
	_ = res.Succeeded()
	return brandsapi.LoginUser200JSONResponse{Body: brandsapi.TokenResponse{Token: tok},
		Headers: brandsapi.LoginUser200ResponseHeaders{CacheControl: noStore}}, nil
}

func (s *server) ResetPassword(ctx context.Context, req brandsapi.ResetPasswordRequestObject) (brandsapi.ResetPasswordResponseObject, error) {
	body := req.JSONBody
	if body == nil {
		body = req.FormdataBody
	}
	if body == nil {
		return refuse[brandsapi.ResetPasswordResponseObject](ctx, errNoBody)
	}
	if err := s.svc.ResetPassword(ctx, token(ctx), body.CurrentPassword, body.NewPassword); err != nil {
		return refuse[brandsapi.ResetPasswordResponseObject](ctx, err)
	}
	return brandsapi.ResetPassword200JSONResponse{Message: msgPasswordChanged}, nil
}

func (s *server) EditProfile(ctx context.Context, req brandsapi.EditProfileRequestObject) (brandsapi.EditProfileResponseObject, error) {
	body := req.JSONBody
	if body == nil {
		body = req.FormdataBody
	}
	if body == nil {
		return refuse[brandsapi.EditProfileResponseObject](ctx, errNoBody)
	}
	if err := s.svc.EditProfile(ctx, token(ctx), deref(body.Name), deref(body.Email)); err != nil {
		return refuse[brandsapi.EditProfileResponseObject](ctx, err)
	}
	return brandsapi.EditProfile200JSONResponse{Message: msgProfileChanged}, nil
}

func (s *server) LogoutUser(ctx context.Context, _ brandsapi.LogoutUserRequestObject) (brandsapi.LogoutUserResponseObject, error) {
	if err := s.svc.Logout(ctx, token(ctx)); err != nil {
		return refuse[brandsapi.LogoutUserResponseObject](ctx, err)
	}
	return brandsapi.LogoutUser200JSONResponse{Message: msgLoggedOut}, nil
}

func (s *server) GetMe(ctx context.Context, _ brandsapi.GetMeRequestObject) (brandsapi.GetMeResponseObject, error) {
	me, err := s.svc.MeJSON(ctx, token(ctx))
	if err != nil {
		return refuse[brandsapi.GetMeResponseObject](ctx, err)
	}
	return rawJSON{status: http.StatusOK, body: string(me), noStore: true}, nil
}

func (s *server) ListBrands(ctx context.Context, _ brandsapi.ListBrandsRequestObject) (brandsapi.ListBrandsResponseObject, error) {
	list, err := s.svc.ListJSON(ctx)
	if err != nil {
		return nil, err
	}
	return rawJSON{status: http.StatusOK, body: list}, nil
}

func (s *server) ListFeaturedBrands(ctx context.Context, _ brandsapi.ListFeaturedBrandsRequestObject) (brandsapi.ListFeaturedBrandsResponseObject, error) {
	list, err := s.svc.FeaturedJSON(ctx)
	if err != nil {
		return nil, err
	}
	return rawJSON{status: http.StatusOK, body: list}, nil
}

func (s *server) GetBrand(ctx context.Context, req brandsapi.GetBrandRequestObject) (brandsapi.GetBrandResponseObject, error) {
	b, err := s.svc.BrandJSON(ctx, req.Id)
	if err != nil {
		return refuse[brandsapi.GetBrandResponseObject](ctx, err)
	}
	return rawJSON{status: http.StatusOK, body: b}, nil
}

func (s *server) SubscribeBrand(ctx context.Context, req brandsapi.SubscribeBrandRequestObject) (brandsapi.SubscribeBrandResponseObject, error) {
	created, err := s.svc.Subscribe(ctx, token(ctx), req.Id)
	if err != nil {
		return refuse[brandsapi.SubscribeBrandResponseObject](ctx, err)
	}
	if !created {
		return brandsapi.SubscribeBrand200JSONResponse{Message: msgAlreadySub}, nil
	}
	return brandsapi.SubscribeBrand200JSONResponse{Message: msgSubscribed}, nil
}

func (s *server) UnsubscribeBrand(ctx context.Context, req brandsapi.UnsubscribeBrandRequestObject) (brandsapi.UnsubscribeBrandResponseObject, error) {
	removed, err := s.svc.Unsubscribe(ctx, token(ctx), req.Id)
	if err != nil {
		return refuse[brandsapi.UnsubscribeBrandResponseObject](ctx, err)
	}
	if !removed {
		return brandsapi.UnsubscribeBrand200JSONResponse{Message: msgNotSubscribed}, nil
	}
	return brandsapi.UnsubscribeBrand200JSONResponse{Message: msgUnsubscribed}, nil
}

func (s *server) CreateBrand(ctx context.Context, req brandsapi.CreateBrandRequestObject) (brandsapi.CreateBrandResponseObject, error) {
	if req.Body == nil {
		return refuse[brandsapi.CreateBrandResponseObject](ctx, errNoBody)
	}
	b := req.Body
	in := brands.BrandInput{
		Name:          b.Name,
		Description:   deref(b.Description),
		URL:           deref(b.Url),
		FeaturedImage: deref(b.FeaturedImage),
		Availability:  b.Availability == nil || *b.Availability, // the spec's default: true
		IsFeatured:    b.IsFeatured != nil && *b.IsFeatured,
	}
	if b.Products != nil {
		in.Products = products(*b.Products)
	}
	out, err := s.svc.CreateBrand(ctx, token(ctx), in)
	if err != nil {
		return refuse[brandsapi.CreateBrandResponseObject](ctx, err)
	}
	return rawJSON{status: http.StatusCreated, body: out}, nil
}

func (s *server) UpdateBrand(ctx context.Context, req brandsapi.UpdateBrandRequestObject) (brandsapi.UpdateBrandResponseObject, error) {
	if req.Body == nil {
		return refuse[brandsapi.UpdateBrandResponseObject](ctx, errNoBody)
	}
	b := req.Body
	in := brands.BrandPatch{
		Name: b.Name, Description: b.Description, URL: b.Url, FeaturedImage: b.FeaturedImage,
		Availability: b.Availability, IsFeatured: b.IsFeatured,
	}
	if b.Products != nil {
		ps := products(*b.Products)
		in.Products = &ps
	}
	out, err := s.svc.UpdateBrand(ctx, token(ctx), req.Id, in)
	if err != nil {
		return refuse[brandsapi.UpdateBrandResponseObject](ctx, err)
	}
	return rawJSON{status: http.StatusOK, body: out}, nil
}

func (s *server) DeleteBrand(ctx context.Context, req brandsapi.DeleteBrandRequestObject) (brandsapi.DeleteBrandResponseObject, error) {
	if err := s.svc.DeleteBrand(ctx, token(ctx), req.Id); err != nil {
		return refuse[brandsapi.DeleteBrandResponseObject](ctx, err)
	}
	return brandsapi.DeleteBrand200JSONResponse{Message: msgBrandDeleted}, nil
}

func products(in []brandsapi.Product) []brands.Product {
	out := make([]brands.Product, len(in))
	for i, p := range in {
		out[i] = p
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
