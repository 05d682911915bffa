package main

import "github.com/go-chi/chi/v5"

// mountAuth mounts the auth surface. Its issue fills this in.
func (a *app) mountAuth(r chi.Router) error { return nil }
