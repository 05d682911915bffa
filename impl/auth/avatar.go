package auth

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/triadhq/triad/impl/auth/logger"
	"github.com/triadhq/triad/impl/avatar"
	"github.com/triadhq/triad/impl/web"
)

// initAvatar builds the avatar proxy when a store is configured: providers save pictures through it
// (Params.AvatarSaver) and Handlers() serves them. Without a store providers keep the pictures they
// get and the avatar handler answers 404.
func (s *Service) initAvatar() error {
	if s.opts.AvatarStore == nil {
		s.avatarH = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			web.WriteError(w, r, http.StatusNotFound, web.Error{Code: web.CodeNotFound, Message: "no such avatar"})
		})
		return nil
	}
	proxy := avatar.NewProxy(avatar.ProxyOptions{
		Store: s.opts.AvatarStore, URL: s.opts.URL, RoutePath: s.opts.AvatarRoutePath,
		ResizeLimit: s.opts.AvatarResizeLimit, HTTPClient: s.opts.AvatarHTTPClient,
		// Refused pictures (private addresses, bombs, non-images) are what an operator needs to
		// see, so the proxy logs through the service's logger rather than nowhere.
		Logger: slog.New(logfHandler{l: s.opts.Logger}),
	})
	s.avatar = proxy
	s.avatarH = proxy.Handler()
	return nil
}

// logfHandler writes slog records to the service's logger as "[LEVEL] message key="value" ..."
// lines, the shape of the service's own lines, whose level prefix adapters such as the reference
// server's map back to a level.
type logfHandler struct {
	l     logger.L
	attrs []slog.Attr
}

// Enabled lets every level through; the service's logger does its own filtering.
func (h logfHandler) Enabled(context.Context, slog.Level) bool { return true }

// Handle writes one record as one line.
func (h logfHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("[" + r.Level.String() + "] " + r.Message)
	add := func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.Resolve().String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.l.Logf("%s", b.String())
	return nil
}

// WithAttrs returns a handler that adds as to every line.
func (h logfHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logfHandler{l: h.l, attrs: append(slices.Clip(h.attrs), as...)}
}

// WithGroup keeps attributes flat: the proxy uses no groups.
func (h logfHandler) WithGroup(string) slog.Handler { return h }
