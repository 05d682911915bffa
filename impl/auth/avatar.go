package auth

import (
	"net/http"

	"github.com/triadhq/triad/impl/web"
)

// initAvatar builds the avatar proxy from the options. Until the avatar store is configured the
// providers keep the pictures they get and the avatar handler answers 404.
func (s *Service) initAvatar() error {
	s.avatarH = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web.WriteError(w, r, http.StatusNotFound, web.Error{Code: web.CodeNotFound, Message: "no such avatar"})
	})
	return nil
}
