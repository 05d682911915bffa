package main

import (
	"net/http"
	"sync/atomic"
)

// draining is set when the server was told to stop (SIGTERM, SIGINT): for DRAIN_DELAY it keeps
// serving, while /readyz answers 503 so that the balancer (or Kubernetes' endpoints controller)
// takes it out of the rotation, and every response closes its connection, so that no client or
// balancer keeps a keep-alive connection it could send the next request on just as the server
// closes it (that race lost POSTs, which nobody may retry blindly). Only then does the server stop
// accepting connections and finish the requests in flight (SHUTDOWN_TIMEOUT).
type draining struct{ on atomic.Bool }

// closeWhileDraining adds Connection: close to every response once draining: Go's server then
// closes the connection after the response instead of keeping it for the next request.
func (d *draining) closeWhileDraining(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.on.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}
