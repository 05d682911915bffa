package httpapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

// server implements the generated strict interface: each method translates one operation into a
// domain call and its result into the documented response.
type server struct{ a *API }

var _ ordersapi.StrictServerInterface = (*server)(nil)

// RegisterOrdersUser is POST /users.
func (s *server) RegisterOrdersUser(ctx context.Context, req ordersapi.RegisterOrdersUserRequestObject) (ordersapi.RegisterOrdersUserResponseObject, error) {
	// Registrations are capped per client address (loginguard.Signups); only one that created
	// an account counts. Under an Idempotency-Key, the answer is kept with the user it creates.
	idempotency.Answer(ctx, func(u orders.User) idempotency.Visit { return registered(u).VisitRegisterOrdersUserResponse })
	addr := web.ClientAddrOf(ctx)
	var u orders.User
	err := s.a.edge.Signups.Register(ctx, addr, func(ctx context.Context) (err error) {
		u, err = s.a.svc.Register(ctx, req.Body.Username, req.Body.Password, orders.UserType(req.Body.UserType))
		return err
	})
	if err != nil {
		return nil, err
	}
	return registered(u), nil
}

// registered is the answer to a registration.
func registered(u orders.User) ordersapi.RegisterOrdersUser201JSONResponse {
	loc := "/authenticated"
	return ordersapi.RegisterOrdersUser201JSONResponse{Body: userJSON(u), Headers: ordersapi.RegisterOrdersUser201ResponseHeaders{Location: &loc}}
}

// GetAuthenticatedUser is GET /authenticated.
func (s *server) GetAuthenticatedUser(ctx context.Context, _ ordersapi.GetAuthenticatedUserRequestObject) (ordersapi.GetAuthenticatedUserResponseObject, error) {
	u, err := s.a.svc.User(ctx, principal(ctx).ID)
	if err != nil {
		return nil, err
	}
	return ordersapi.GetAuthenticatedUser200JSONResponse(userJSON(u)), nil
}

// ListNewOrders is GET /orders.
func (s *server) ListNewOrders(ctx context.Context, req ordersapi.ListNewOrdersRequestObject) (ordersapi.ListNewOrdersResponseObject, error) {
	pr, err := orders.ParsePage(req.Params.Page, req.Params.Size, (*string)(req.Params.Sort))
	if err != nil {
		return nil, err
	}
	page, err := s.a.svc.ListWaiting(ctx, principal(ctx), pr)
	if err != nil {
		return nil, err
	}
	return ordersapi.ListNewOrders200JSONResponse{OrderPageJSONResponse: pageJSON(page)}, nil
}

// ListUserOrders is GET /users/{id}/orders.
func (s *server) ListUserOrders(ctx context.Context, req ordersapi.ListUserOrdersRequestObject) (ordersapi.ListUserOrdersResponseObject, error) {
	pr, err := orders.ParsePage(req.Params.Page, req.Params.Size, (*string)(req.Params.Sort))
	if err != nil {
		return nil, err
	}
	page, err := s.a.svc.ListOwn(ctx, principal(ctx), req.Id, pr)
	if err != nil {
		return nil, err
	}
	return ordersapi.ListUserOrders200JSONResponse{OrderPageJSONResponse: pageJSON(page)}, nil
}

// CreateOrder is POST /orders.
func (s *server) CreateOrder(ctx context.Context, req ordersapi.CreateOrderRequestObject) (ordersapi.CreateOrderResponseObject, error) {
	p := principal(ctx)
	if p.Type != orders.Customer {
		// The role is checked before the body so a performer learns nothing about input rules.
		return nil, &orders.Refusal{Kind: domainerr.Forbidden, Msg: "only customers create orders"}
	}
	price, err := orders.CheckNewOrder(req.Body.Description, req.Body.Price.String())
	if err != nil {
		return nil, err
	}
	// Under an Idempotency-Key, the answer is kept with the order it creates.
	idempotency.Answer(ctx, func(o orders.Order) idempotency.Visit { return created(o).VisitCreateOrderResponse })
	o, err := s.a.svc.CreateOrder(ctx, p, req.Body.Description, price)
	if err != nil {
		return nil, err
	}
	s.a.events.Add(EventCreated, 1)
	return created(o), nil
}

// created is the answer to an order's creation.
func created(o orders.Order) ordersapi.CreateOrder201JSONResponse {
	loc := fmt.Sprintf("/orders/%d", o.ID)
	return ordersapi.CreateOrder201JSONResponse{Body: orderJSON(o), Headers: ordersapi.CreateOrder201ResponseHeaders{Location: &loc}}
}

// GetOrder is GET /orders/{id}, where the Location of POST /orders points.
func (s *server) GetOrder(ctx context.Context, req ordersapi.GetOrderRequestObject) (ordersapi.GetOrderResponseObject, error) {
	o, err := s.a.svc.Order(ctx, principal(ctx), req.Id)
	if err != nil {
		return nil, err
	}
	return ordersapi.GetOrder200JSONResponse(orderJSON(o)), nil
}

// The moves (take, pass, cancel, release, reject, accept) take an Idempotency-Key: under one, the
// answer is kept with the move's write (idempotency.Answer before the domain call).

// TakeOrder is PATCH /orders/{id}/take.
func (s *server) TakeOrder(ctx context.Context, req ordersapi.TakeOrderRequestObject) (ordersapi.TakeOrderResponseObject, error) {
	idempotency.Answer(ctx, func(o orders.Order) idempotency.Visit { return taken(o).VisitTakeOrderResponse })
	o, err := s.a.svc.Take(ctx, principal(ctx), req.Id)
	if err != nil {
		return nil, err
	}
	return taken(o), nil
}

func taken(o orders.Order) ordersapi.TakeOrder200JSONResponse {
	return ordersapi.TakeOrder200JSONResponse{OrderOKJSONResponse: orderOK(o)}
}

// PassOrder is PATCH /orders/{id}/pass.
func (s *server) PassOrder(ctx context.Context, req ordersapi.PassOrderRequestObject) (ordersapi.PassOrderResponseObject, error) {
	idempotency.Answer(ctx, func(o orders.Order) idempotency.Visit { return passed(o).VisitPassOrderResponse })
	o, err := s.a.svc.Pass(ctx, principal(ctx), req.Id)
	if err != nil {
		return nil, err
	}
	return passed(o), nil
}

func passed(o orders.Order) ordersapi.PassOrder200JSONResponse {
	return ordersapi.PassOrder200JSONResponse{OrderOKJSONResponse: orderOK(o)}
}

// CancelOrder is PATCH /orders/{id}/cancel.
func (s *server) CancelOrder(ctx context.Context, req ordersapi.CancelOrderRequestObject) (ordersapi.CancelOrderResponseObject, error) {
	idempotency.Answer(ctx, func(o orders.Order) idempotency.Visit { return cancelled(o).VisitCancelOrderResponse })
	o, err := s.a.svc.Cancel(ctx, principal(ctx), req.Id)
	if err != nil {
		return nil, err
	}
	return cancelled(o), nil
}

func cancelled(o orders.Order) ordersapi.CancelOrder200JSONResponse {
	return ordersapi.CancelOrder200JSONResponse{Body: orderJSON(o)}
}

// ReleaseOrder is PATCH /orders/{id}/release.
func (s *server) ReleaseOrder(ctx context.Context, req ordersapi.ReleaseOrderRequestObject) (ordersapi.ReleaseOrderResponseObject, error) {
	idempotency.Answer(ctx, func(o orders.Order) idempotency.Visit { return released(o).VisitReleaseOrderResponse })
	o, err := s.a.svc.Release(ctx, principal(ctx), req.Id)
	if err != nil {
		return nil, err
	}
	return released(o), nil
}

func released(o orders.Order) ordersapi.ReleaseOrder200JSONResponse {
	return ordersapi.ReleaseOrder200JSONResponse{Body: orderJSON(o)}
}

// RejectOrder is PATCH /orders/{id}/reject, with cancel=true rejected and cancelled in one step.
func (s *server) RejectOrder(ctx context.Context, req ordersapi.RejectOrderRequestObject) (ordersapi.RejectOrderResponseObject, error) {
	idempotency.Answer(ctx, func(o orders.Order) idempotency.Visit { return rejected(o).VisitRejectOrderResponse })
	o, err := s.a.svc.Reject(ctx, principal(ctx), req.Id, req.Params.Cancel != nil && *req.Params.Cancel)
	if err != nil {
		return nil, err
	}
	return rejected(o), nil
}

func rejected(o orders.Order) ordersapi.RejectOrder200JSONResponse {
	return ordersapi.RejectOrder200JSONResponse{Body: orderJSON(o)}
}

// AcceptOrder is PATCH /orders/{id}/accept.
func (s *server) AcceptOrder(ctx context.Context, req ordersapi.AcceptOrderRequestObject) (ordersapi.AcceptOrderResponseObject, error) {
	idempotency.Answer(ctx, func(o orders.Order) idempotency.Visit { return accepted(o).VisitAcceptOrderResponse })
	o, err := s.a.svc.Accept(ctx, principal(ctx), req.Id)
	if err != nil {
		return nil, err
	}
	s.a.events.Add(EventAccepted, 1)
	return accepted(o), nil
}

func accepted(o orders.Order) ordersapi.AcceptOrder200JSONResponse {
	return ordersapi.AcceptOrder200JSONResponse{OrderOKJSONResponse: orderOK(o)}
}

// orderOK is the answer of a move to o (OrderOK).
func orderOK(o orders.Order) ordersapi.OrderOKJSONResponse {
	return ordersapi.OrderOKJSONResponse{Body: orderJSON(o)}
}

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
