package web

import (
	"context"
	"net/http"
	"slices"

	"github.com/triadhq/triad/impl/credentials/device"
)

type deviceKey struct{}

// deviceSlot carries a login's device cookie in (presented) and the token to keep out (keep).
type deviceSlot struct{ presented, keep string }

// DeviceCookieFor returns a generated strict server's middleware that carries a device cookie
// (OWASP's device cookies, impl/credentials/device) through the login operations named: the value
// of the request's cookie named cookie.Name reaches the operation (DeviceOf), and a token the
// operation keeps (KeepDevice) goes back as a Set-Cookie of cookie's attributes with that value,
// set before the operation's answer is written. Other operations are untouched.
func DeviceCookieFor[F StrictHandler](cookie http.Cookie, operationIDs ...string) func(f F, operationID string) F {
	return func(f F, operationID string) F {
		if !slices.Contains(operationIDs, operationID) {
			return f
		}
		return func(ctx context.Context, w http.ResponseWriter, r *http.Request, req any) (any, error) {
			ctx, kept := WithDevice(ctx, r, cookie.Name)
			resp, err := f(ctx, w, r, req)
			if err == nil {
				SetDevice(w, cookie, kept())
			}
			return resp, err
		}
	}
}

// WithDevice carries the device cookie named name of r into ctx, for a login served outside a
// generated strict server (DeviceCookieFor's, by hand): the login reads it with DeviceOf and keeps
// a token with KeepDevice, and kept then reports that token ("" for none), for SetDevice on the
// login's answer.
func WithDevice(ctx context.Context, r *http.Request, name string) (_ context.Context, kept func() string) {
	slot := &deviceSlot{presented: device.Presented(r.CookiesNamed(name))}
	return context.WithValue(ctx, deviceKey{}, slot), func() string { return slot.keep }
}

// SetDevice sets cookie (its attributes) with the value tok on w, before the answer is written;
// tok "" sets nothing (the client keeps what it has).
func SetDevice(w http.ResponseWriter, cookie http.Cookie, tok string) {
	if tok == "" {
		return
	}
	cookie.Value = tok
	http.SetCookie(w, &cookie)
}

// DeviceOf is the device token the client presented to an operation of DeviceCookieFor, or "".
func DeviceOf(ctx context.Context) string {
	if s, ok := ctx.Value(deviceKey{}).(*deviceSlot); ok {
		return s.presented
	}
	return ""
}

// KeepDevice has the client keep tok as its device token (a Set-Cookie on the operation's answer);
// outside an operation of DeviceCookieFor, or with tok "", it does nothing.
func KeepDevice(ctx context.Context, tok string) {
	if s, ok := ctx.Value(deviceKey{}).(*deviceSlot); ok && tok != "" {
		s.keep = tok
	}
}
