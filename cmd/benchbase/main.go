// Command benchbase is the baseline server of `make bench`: the least work an HTTP endpoint can do
// with the same stack (a bare chi handler, a raw pgx query), and hand-written chi + pgx handlers of
// the read routes running the same SQL as triad (reads.go), so triad's figures can be reported as
// ratios measured in the same run on the same noisy machine.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "listen address")
	dbURL := flag.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL for the /pgx baselines")
	jwtSecret := flag.String("jwt-secret", "dev-only-secret-change-me-0123456789", "HS256 secret of the /jwt baseline (default: the server's dev-mode AUTH_SECRET)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	r := chi.NewRouter()
	// /bare: a chi handler writing a small JSON body, the floor for any endpoint.
	r.Get("/bare", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	// /jwt: a chi handler that reads the JWT cookie and parses it (HS256, golang-jwt), then answers
	// the user claim: the floor for an endpoint that authenticates a request (/auth/user).
	jwtKey := []byte(*jwtSecret)
	jwtParser := jwt.NewParser(jwt.WithValidMethods([]string{"HS256"}))
	r.Get("/jwt", func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie("JWT")
		if err != nil {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		claims := jwt.MapClaims{}
		if _, err := jwtParser.ParseWithClaims(ck.Value, claims, func(*jwt.Token) (any, error) { return jwtKey, nil }); err != nil {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(claims["user"])
	})
	if *dbURL != "" {
		pool, err := pgxpool.New(ctx, *dbURL)
		if err != nil {
			log.Fatal(err)
		}
		defer pool.Close()
		// /pgx: one round trip to the database, the floor for an endpoint that reads it.
		r.Get("/pgx", func(w http.ResponseWriter, r *http.Request) {
			var one int
			if err := pool.QueryRow(r.Context(), "SELECT 1").Scan(&one); err != nil {
				http.Error(w, "db", http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"status": "ready", "database": "ok"})
		})
		// The read routes of the orders and brands APIs, running triad's own SQL (reads.go).
		mountReads(r, pool)
	}
	srv := &http.Server{Addr: *addr, Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		shCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shCtx)
	}()
	fmt.Fprintln(os.Stderr, "benchbase listening on", *addr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
