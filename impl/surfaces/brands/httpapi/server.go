package httpapi

import (
	"context"
	"net/http"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/brands"
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

// noStore is the Cache-Control of every answer that carries an access token: no browser or shared
// cache may keep a credential.
const noStore = "no-store"

// server implements the generated strict interface: each method translates one operation into a
// call of brands.Service and renders its result; errors go to the refusal table.
type server struct{ a *API }

var _ brandsapi.StrictServerInterface = (*server)(nil)

// errNoBody is a body in neither JSON nor form encoding; the spec validator refuses those first.
var errNoBody = invalid.Problems{invalid.New(invalid.Body, "body", invalid.Required)}

// bodyOf is the one pick of an operation's body, which the spec lets come as JSON or as a form:
// whichever the generated binder filled, or errNoBody.
func bodyOf[B any](json, form *B) (*B, error) {
	switch {
	case json != nil:
		return json, nil
	case form != nil:
		return form, nil
	}
	return nil, errNoBody
}

// RegisterBrandsUser is POST /api/user/register.
func (s *server) RegisterBrandsUser(ctx context.Context, req brandsapi.RegisterBrandsUserRequestObject) (brandsapi.RegisterBrandsUserResponseObject, error) {
	body, err := bodyOf(req.JSONBody, req.FormdataBody)
	if err != nil {
		return nil, err
	}
	// Registrations are capped per client address (loginguard.Signups); only one that created
	// an account counts. Under an Idempotency-Key, the answer is kept with the user it creates.
	idempotency.Answer(ctx, func(reg brands.Registered) idempotency.Visit { return registered(reg).VisitRegisterBrandsUserResponse })
	var reg brands.Registered
	err = s.a.edge.Signups.Register(ctx, web.ClientAddrOf(ctx), func(ctx context.Context) (err error) {
		reg, err = s.a.svc.Register(ctx, body.Name, body.Email, body.Password)
		return err
	})
	if err != nil {
		return nil, err
	}
	return registered(reg), nil
}

// registered is the answer to a registration.
func registered(reg brands.Registered) brandsapi.RegisterBrandsUser201JSONResponse {
	return brandsapi.RegisterBrandsUser201JSONResponse{
		Body: brandsapi.RegisteredUser{
			UnderscoreId:  reg.ID,
			Token:         reg.Token,
			Email:         reg.Email,
			Name:          reg.Name,
			Subscriptions: []brandsapi.Brand{},
			CreatedAt:     reg.CreatedAt.UTC().Format(timeLayout),
		},
		Headers: brandsapi.RegisterBrandsUser201ResponseHeaders{CacheControl: noStore},
	}
}

// LoginUser is POST /api/user/login.
func (s *server) LoginUser(ctx context.Context, req brandsapi.LoginUserRequestObject) (brandsapi.LoginUserResponseObject, error) {
	body, err := bodyOf(req.JSONBody, req.FormdataBody)
	if err != nil {
		return nil, err
	}
	// The edge's login (tokenedge.Edge.Login), as orders' token endpoint's: the shared login guard
	// (impl/credentials/loginguard: a busy hasher is refused before any database work, the attempt
	// is reserved against the failed-login limit before the password is checked, and only a wrong
	// password keeps it counted) with the device cookie the edge carries in and out. Its refusals
	// are in the table (refusals.go).
	tok, err := s.a.edge.Login(ctx, body.Email, func(ctx context.Context) (brands.Principal, error) {
		return s.a.svc.Authenticate(ctx, body.Email, body.Password)
	})
	if err != nil {
		return nil, err
	}
	return brandsapi.LoginUser200JSONResponse{Body: brandsapi.TokenResponse{Token: tok},
		Headers: brandsapi.LoginUser200ResponseHeaders{CacheControl: noStore}}, nil
}

// ResetPassword is POST /api/user/reset.
func (s *server) ResetPassword(ctx context.Context, req brandsapi.ResetPasswordRequestObject) (brandsapi.ResetPasswordResponseObject, error) {
	body, err := bodyOf(req.JSONBody, req.FormdataBody)
	if err != nil {
		return nil, err
	}
	if err := s.a.svc.ResetPassword(ctx, principal(ctx), presentedToken(ctx), body.CurrentPassword, body.NewPassword); err != nil {
		return nil, err
	}
	return brandsapi.ResetPassword200JSONResponse{Message: msgPasswordChanged}, nil
}

// EditProfile is PUT /api/user/edit.
func (s *server) EditProfile(ctx context.Context, req brandsapi.EditProfileRequestObject) (brandsapi.EditProfileResponseObject, error) {
	body, err := bodyOf(req.JSONBody, req.FormdataBody)
	if err != nil {
		return nil, err
	}
	if err := s.a.svc.EditProfile(ctx, principal(ctx), deref(body.Name), deref(body.Email)); err != nil {
		return nil, err
	}
	return brandsapi.EditProfile200JSONResponse{Message: msgProfileChanged}, nil
}

// LogoutUser is POST /api/user/logout.
func (s *server) LogoutUser(ctx context.Context, _ brandsapi.LogoutUserRequestObject) (brandsapi.LogoutUserResponseObject, error) {
	if err := s.a.svc.Logout(ctx, presentedToken(ctx)); err != nil {
		return nil, err
	}
	return brandsapi.LogoutUser200JSONResponse{Message: msgLoggedOut}, nil
}

// GetMe is GET /api/user/me.
func (s *server) GetMe(ctx context.Context, _ brandsapi.GetMeRequestObject) (brandsapi.GetMeResponseObject, error) {
	me, err := s.a.svc.Me(ctx, principal(ctx))
	if err != nil {
		return nil, err
	}
	return brandsapi.GetMe200JSONResponse{Body: userJSON(presentedToken(ctx), &me), Headers: brandsapi.GetMe200ResponseHeaders{CacheControl: noStore}}, nil
}

// ListBrands is GET /api/brand/list.
func (s *server) ListBrands(ctx context.Context, _ brandsapi.ListBrandsRequestObject) (brandsapi.ListBrandsResponseObject, error) {
	list, err := s.a.available.get(ctx, s.a.svc)
	if err != nil {
		return nil, err
	}
	return cachedList(list), nil
}

// ListFeaturedBrands is GET /api/brand/list/featured.
func (s *server) ListFeaturedBrands(ctx context.Context, _ brandsapi.ListFeaturedBrandsRequestObject) (brandsapi.ListFeaturedBrandsResponseObject, error) {
	list, err := s.a.featured.get(ctx, s.a.svc)
	if err != nil {
		return nil, err
	}
	return cachedList(list), nil
}

// GetBrand is GET /api/brand/{id}.
func (s *server) GetBrand(ctx context.Context, req brandsapi.GetBrandRequestObject) (brandsapi.GetBrandResponseObject, error) {
	b, err := s.a.svc.Brand(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return brandsapi.GetBrand200JSONResponse(brandJSON(&b)), nil
}

// SubscribeBrand is POST /api/subscribe/{id}.
func (s *server) SubscribeBrand(ctx context.Context, req brandsapi.SubscribeBrandRequestObject) (brandsapi.SubscribeBrandResponseObject, error) {
	idempotency.Answer(ctx, func(created bool) idempotency.Visit { return subscribed(created).VisitSubscribeBrandResponse })
	created, err := s.a.svc.Subscribe(ctx, principal(ctx), req.Id)
	if err != nil {
		return nil, err
	}
	return subscribed(created), nil
}

// subscribed is the answer to a subscription: created, or there already.
func subscribed(created bool) brandsapi.SubscribeBrand200JSONResponse {
	if !created {
		return brandsapi.SubscribeBrand200JSONResponse{Body: brandsapi.Message{Message: msgAlreadySub}}
	}
	return brandsapi.SubscribeBrand200JSONResponse{Body: brandsapi.Message{Message: msgSubscribed}}
}

// UnsubscribeBrand is POST /api/unsubscribe/{id}.
func (s *server) UnsubscribeBrand(ctx context.Context, req brandsapi.UnsubscribeBrandRequestObject) (brandsapi.UnsubscribeBrandResponseObject, error) {
	removed, err := s.a.svc.Unsubscribe(ctx, principal(ctx), req.Id)
	if err != nil {
		return nil, err
	}
	if !removed {
		return brandsapi.UnsubscribeBrand200JSONResponse{Message: msgNotSubscribed}, nil
	}
	return brandsapi.UnsubscribeBrand200JSONResponse{Message: msgUnsubscribed}, nil
}

// CreateBrand is POST /api/brand.
func (s *server) CreateBrand(ctx context.Context, req brandsapi.CreateBrandRequestObject) (brandsapi.CreateBrandResponseObject, error) {
	if req.Body == nil {
		return nil, errNoBody
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
	out, err := s.a.svc.CreateBrand(ctx, principal(ctx), in)
	if err != nil {
		return nil, err
	}
	return brandsapi.CreateBrand201JSONResponse(brandJSON(&out)), nil
}

// UpdateBrand is PATCH /api/brand/{id}.
func (s *server) UpdateBrand(ctx context.Context, req brandsapi.UpdateBrandRequestObject) (brandsapi.UpdateBrandResponseObject, error) {
	if req.Body == nil {
		return nil, errNoBody
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
	out, err := s.a.svc.UpdateBrand(ctx, principal(ctx), req.Id, in)
	if err != nil {
		return nil, err
	}
	return brandsapi.UpdateBrand200JSONResponse(brandJSON(&out)), nil
}

// DeleteBrand is DELETE /api/brand/{id}.
func (s *server) DeleteBrand(ctx context.Context, req brandsapi.DeleteBrandRequestObject) (brandsapi.DeleteBrandResponseObject, error) {
	// Under an Idempotency-Key, the answer is kept with the deletion.
	idempotency.Answer(ctx, func(struct{}) idempotency.Visit { return brandDeleted().VisitDeleteBrandResponse })
	if err := s.a.svc.DeleteBrand(ctx, principal(ctx), req.Id); err != nil {
		return nil, err
	}
	return brandDeleted(), nil
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

// cachedList is a brand list answered with the bytes the list cache holds (render.go): the one
// answer not encoded per request, since its encoding is kept while the list's rows stand.
type cachedList []byte

// VisitListBrandsResponse writes the list as ListBrands200JSONResponse would.
func (l cachedList) VisitListBrandsResponse(w http.ResponseWriter) error { return l.write(w) }

// VisitListFeaturedBrandsResponse writes the list as ListFeaturedBrands200JSONResponse would.
func (l cachedList) VisitListFeaturedBrandsResponse(w http.ResponseWriter) error { return l.write(w) }

func (l cachedList) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(l)
	return err
}

// brandDeleted is the answer to a brand's deletion.
func brandDeleted() brandsapi.DeleteBrand200JSONResponse {
	return brandsapi.DeleteBrand200JSONResponse{Body: brandsapi.Message{Message: msgBrandDeleted}}
}
