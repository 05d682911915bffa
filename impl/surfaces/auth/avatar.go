package auth

import (
	"net/http"

	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
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
		Logger: s.log,
	})
	s.avatar, s.proxy = proxy, proxy
	s.avatarH = proxy.Handler()
	return nil
}
