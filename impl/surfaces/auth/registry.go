package auth

import (
	"errors"

	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// The registered providers, read (the Add* methods of auth.go register them), and their shutdown.

// Provider returns the registered provider of that name.
func (s *Service) Provider(name string) (provider.Provider, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.providers {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// Providers lists the registered provider names in registration order.
func (s *Service) Providers() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, len(s.providers))
	for i, p := range s.providers {
		out[i] = p.Name()
	}
	return out
}

func (s *Service) isProvider(name string) bool {
	_, ok := s.Provider(name)
	return ok
}

// Close stops background parts (the dev server, providers with a Close method, the avatar store).
func (s *Service) Close() error {
	s.mu.Lock()
	cl := s.closers
	s.closers = nil
	s.mu.Unlock()
	var errs []error
	for i := len(cl) - 1; i >= 0; i-- {
		errs = append(errs, cl[i]())
	}
	return errors.Join(errs...)
}
