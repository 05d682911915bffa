package main

import (
	"context"
	"net/http"
	"time"

	"github.com/triadhq/triad/impl/kit/web"
)

// readinessPing bounds each database ping of one /readyz (a balancer's check waits 2.5 s).
const readinessPing = 2 * time.Second

// readyz is the readiness probe: whether the balancer should send this server requests.
//
// Not ready while draining, or while no database answers at all. Ready while the primary does
// not answer but the standby (DATABASE_READ_URL) does: the primary is shared by every replica,
// so failing the probe on it takes every server out of the balancer at once, and its clients then
// get the balancer's bare 503s instead of this server's JSON 503 database_unavailable with
// Retry-After on writes, and lose the reads the standby still serves (pgread). With a single
// database (no read URL) its loss still fails the probe: nothing could be served. A database that
// answers but refuses for want of resources (SQLSTATE class 53, recently) is not ready either.
func (a *app) readyz(pc *proxyCheck) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.drain.on.Load() {
			web.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "draining"})
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), readinessPing)
		defer cancel()
		standby := make(chan error, 1)
		if a.standby != nil { // asked at once, so that a frozen primary costs one ping's wait, not two
			go func() { standby <- a.standby.Ping(ctx) }()
		}
		if err := a.Pool.Ping(ctx); err != nil {
			// The outage's shared, rate-limited line: a probe every few seconds per replica must
			// not add a warning each.
			web.ReportOutage(r, a.Log, err)
			if a.standby != nil && <-standby == nil {
				web.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready", "database": "standby only"})
				return
			}
			web.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
			return
		}
		// A full disk (or memory, or connections: SQLSTATE class 53) still answers the ping, so the
		// requests it refused say it: not ready while they are recent. Those refusals are the
		// outage line's count already; the probe adds none.
		if web.ExhaustedRecently(r) {
			web.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "out of resources"})
			return
		}
		ready := map[string]string{"status": "ready", "database": "ok"}
		if d := pc.detail(); d != "" {
			// Still ready: the warning is for the operator reading the probe, not for the kubelet.
			ready["proxy"] = d
		}
		web.WriteJSON(w, http.StatusOK, ready)
	}
}
