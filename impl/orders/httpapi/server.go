package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/orders"
	"github.com/triadhq/triad/impl/orders/money"
	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/web"
)

// server implements the generated strict interface: each method translates one operation into a
// domain call and its result into the documented response.
type server struct{ a *API }

var _ ordersapi.StrictServerInterface = (*server)(nil)

// RegisterOrdersUser is POST /users.
func (s *server) RegisterOrdersUser(ctx context.Context, req ordersapi.RegisterOrdersUserRequestObject) (ordersapi.RegisterOrdersUserResponseObject, error) {
	u, err := s.a.svc.Register(ctx, req.Body.Username, req.Body.Password, orders.UserType(req.Body.UserType))
	if err != nil {
		return refusal(ctx, err)
	}
	loc := "/authenticated"
	return ordersapi.RegisterOrdersUser201JSONResponse{Body: userJSON(u), Headers: ordersapi.RegisterOrdersUser201ResponseHeaders{Location: &loc}}, nil
}

// GetAuthenticatedUser is GET /authenticated.
func (s *server) GetAuthenticatedUser(ctx context.Context, _ ordersapi.GetAuthenticatedUserRequestObject) (ordersapi.GetAuthenticatedUserResponseObject, error) {
	u, err := s.a.svc.User(ctx, principal(ctx).ID)
	if err != nil {
		return refusal(ctx, err)
	}
	return ordersapi.GetAuthenticatedUser200JSONResponse(userJSON(u)), nil
}

// ListNewOrders is GET /orders.
func (s *server) ListNewOrders(ctx context.Context, req ordersapi.ListNewOrdersRequestObject) (ordersapi.ListNewOrdersResponseObject, error) {
	pr, err := orders.ParsePage(req.Params.Page, req.Params.Size, (*string)(req.Params.Sort))
	if err != nil {
		return refusal(ctx, err)
	}
	page, err := s.a.svc.ListWaiting(ctx, principal(ctx), pr)
	if err != nil {
		return refusal(ctx, err)
	}
	return ordersapi.ListNewOrders200JSONResponse{OrderPageJSONResponse: pageJSON(page)}, nil
}

// ListUserOrders is GET /users/{id}/orders.
func (s *server) ListUserOrders(ctx context.Context, req ordersapi.ListUserOrdersRequestObject) (ordersapi.ListUserOrdersResponseObject, error) {
	if err := checkID(req.Id); err != nil {
		return refusal(ctx, err)
	}
	pr, err := orders.ParsePage(req.Params.Page, req.Params.Size, (*string)(req.Params.Sort))
	if err != nil {
		return refusal(ctx, err)
	}
	page, err := s.a.svc.ListOwn(ctx, principal(ctx), req.Id, pr)
	if err != nil {
		return refusal(ctx, err)
	}
	return ordersapi.ListUserOrders200JSONResponse{OrderPageJSONResponse: pageJSON(page)}, nil
}

// CreateOrder is POST /orders.
func (s *server) CreateOrder(ctx context.Context, req ordersapi.CreateOrderRequestObject) (ordersapi.CreateOrderResponseObject, error) {
	p := principal(ctx)
	if p.Type != orders.Customer {
		// The role is checked before the body so a performer learns nothing about input rules.
		return refusal(ctx, &orders.Refusal{Kind: orders.ErrForbidden, Msg: "only customers create orders"})
	}
	price, err := money.Parse(req.Body.Price.String())
	if err != nil {
		return refusal(ctx, &orders.Refusal{Kind: orders.ErrInvalidInput, Field: "price", Msg: "price " + err.Error()})
	}
	o, err := s.a.svc.CreateOrder(ctx, p, req.Body.Description, price)
	if err != nil {
		return refusal(ctx, err)
	}
	loc := fmt.Sprintf("/orders/%d", o.ID)
	return ordersapi.CreateOrder201JSONResponse{Body: orderJSON(o), Headers: ordersapi.CreateOrder201ResponseHeaders{Location: &loc}}, nil
}

// TakeOrder is PATCH /orders/{id}/take.
func (s *server) TakeOrder(ctx context.Context, req ordersapi.TakeOrderRequestObject) (ordersapi.TakeOrderResponseObject, error) {
	if err := checkID(req.Id); err != nil {
		return refusal(ctx, err)
	}
	o, err := s.a.svc.Take(ctx, principal(ctx), req.Id)
	if err != nil {
		return refusal(ctx, err)
	}
	return ordersapi.TakeOrder200JSONResponse{OrderOKJSONResponse: ordersapi.OrderOKJSONResponse(orderJSON(o))}, nil
}

// PassOrder is PATCH /orders/{id}/pass.
func (s *server) PassOrder(ctx context.Context, req ordersapi.PassOrderRequestObject) (ordersapi.PassOrderResponseObject, error) {
	if err := checkID(req.Id); err != nil {
		return refusal(ctx, err)
	}
	o, err := s.a.svc.Pass(ctx, principal(ctx), req.Id)
	if err != nil {
		return refusal(ctx, err)
	}
	return ordersapi.PassOrder200JSONResponse{OrderOKJSONResponse: ordersapi.OrderOKJSONResponse(orderJSON(o))}, nil
}

// AcceptOrder is PATCH /orders/{id}/accept.
func (s *server) AcceptOrder(ctx context.Context, req ordersapi.AcceptOrderRequestObject) (ordersapi.AcceptOrderResponseObject, error) {
	if err := checkID(req.Id); err != nil {
		return refusal(ctx, err)
	}
	o, err := s.a.svc.Accept(ctx, principal(ctx), req.Id)
	if err != nil {
		return refusal(ctx, err)
	}
	return ordersapi.AcceptOrder200JSONResponse{OrderOKJSONResponse: ordersapi.OrderOKJSONResponse(orderJSON(o))}, nil
}

// checkID applies the spec's `minimum: 1` to a path id. These requests carry no body and so skip
// the kin-openapi validator (bodiesOnly); without this, /orders/0/take would answer 404 to a
// request the spec calls invalid.
func checkID(id int64) error {
	if id < 1 {
		return &orders.Refusal{Kind: orders.ErrInvalidInput, Field: "id", Msg: "id must be at least 1"}
	}
	return nil
}

// The refusal of a request the password hasher has no room for (password.ErrBusy).
const (
	codeServerBusy = "server_busy"
	msgServerBusy  = "the server is busy; try again shortly"
)

// errorResponse is a documented refusal. It satisfies every operation's response interface, so
// all operations share the one mapping below.
type errorResponse struct {
	status     int
	retryAfter int // seconds; 0 sends no Retry-After
	body       web.Error
}

// refusal maps a domain error to its status and Error body: the one place where domain errors
// meet HTTP. Anything that is not a domain refusal is returned as an error and becomes an opaque,
// logged 500 (web.StrictResponseError).
func refusal(ctx context.Context, err error) (errorResponse, error) {
	if errors.Is(err, password.ErrBusy) {
		return errorResponse{status: http.StatusServiceUnavailable, retryAfter: 1, body: web.Error{
			Code: codeServerBusy, Message: msgServerBusy, RequestID: web.RequestID(ctx)}}, nil
	}
	var rf *orders.Refusal
	if !errors.As(err, &rf) {
		return errorResponse{}, err
	}
	e := web.Error{Message: rf.Msg, RequestID: web.RequestID(ctx)}
	var status int
	switch {
	case errors.Is(err, orders.ErrInvalidInput):
		status, e.Code, e.Message = http.StatusBadRequest, web.CodeValidation, web.MessageValidation
		e.Details = []web.FieldError{{Field: rf.Field, Message: rf.Msg}}
	case errors.Is(err, orders.ErrForbidden):
		status, e.Code = http.StatusForbidden, web.CodeForbidden
	case errors.Is(err, orders.ErrNotFound):
		status, e.Code = http.StatusNotFound, web.CodeNotFound
	case errors.Is(err, orders.ErrUsernameTaken):
		status, e.Code = http.StatusConflict, "username_taken"
	case errors.Is(err, orders.ErrInvalidState):
		status, e.Code = http.StatusConflict, "invalid_state"
	case errors.Is(err, orders.ErrInsufficientFunds):
		status, e.Code = http.StatusConflict, "insufficient_funds"
	default:
		return errorResponse{}, err
	}
	return errorResponse{status: status, body: e}, nil
}

func (e errorResponse) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	w.WriteHeader(e.status)
	return json.NewEncoder(w).Encode(e.body)
}

// VisitRegisterOrdersUserResponse writes the refusal.
func (e errorResponse) VisitRegisterOrdersUserResponse(w http.ResponseWriter) error {
	return e.write(w)
}

// VisitGetAuthenticatedUserResponse writes the refusal.
func (e errorResponse) VisitGetAuthenticatedUserResponse(w http.ResponseWriter) error {
	return e.write(w)
}

// VisitListNewOrdersResponse writes the refusal.
func (e errorResponse) VisitListNewOrdersResponse(w http.ResponseWriter) error { return e.write(w) }

// VisitListUserOrdersResponse writes the refusal.
func (e errorResponse) VisitListUserOrdersResponse(w http.ResponseWriter) error { return e.write(w) }

// VisitCreateOrderResponse writes the refusal.
func (e errorResponse) VisitCreateOrderResponse(w http.ResponseWriter) error { return e.write(w) }

// VisitTakeOrderResponse writes the refusal.
func (e errorResponse) VisitTakeOrderResponse(w http.ResponseWriter) error { return e.write(w) }

// VisitPassOrderResponse writes the refusal.
func (e errorResponse) VisitPassOrderResponse(w http.ResponseWriter) error { return e.write(w) }

// VisitAcceptOrderResponse writes the refusal.
func (e errorResponse) VisitAcceptOrderResponse(w http.ResponseWriter) error { return e.write(w) }

func userJSON(u orders.User) ordersapi.User {
	return ordersapi.User{Id: u.ID, Username: u.Username, UserType: ordersapi.UserType(u.Type), Balance: json.Number(u.Balance.String())}
}

func orderJSON(o orders.Order) ordersapi.Order {
	out := ordersapi.Order{
		Id: o.ID, CustomerId: o.CustomerID, Description: o.Description, Price: json.Number(o.Price.String()),
		Status: ordersapi.OrderStatus(o.Status), CreatedAt: o.CreatedAt.UTC(),
	}
	if o.PerformerID != 0 {
		out.Performer = &ordersapi.UserRef{Id: o.PerformerID, Username: o.PerformerName}
	}
	return out
}

func pageJSON(p orders.PageOf[orders.Order]) ordersapi.OrderPageJSONResponse {
	items := make([]ordersapi.Order, len(p.Items))
	for i, o := range p.Items {
		items[i] = orderJSON(o)
	}
	return ordersapi.OrderPageJSONResponse{
		Content: items,
		Page: ordersapi.PageMeta{Number: int32(p.Number), Size: int32(p.Size), TotalElements: p.TotalElements,
			TotalPages: int32(p.TotalPages())},
	}
}
