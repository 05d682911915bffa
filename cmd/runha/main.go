// Command runha is `make run-ha`: the HA stack of impl/testkit/hastack (etcd, Patroni over
// three PostgreSQL nodes with quorum commit, HAProxy by Patroni's checks, PgBouncer with
// deploy/pgbouncer/pgbouncer.ini's settings, pgBackRest archiving), then REPLICAS dev-mode servers
// with the pooled, multi-host direct and read URLs behind an HAProxy on PORT, until Ctrl-C.
// docs/replicas.md, "High availability".
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/triadhq/triad/impl/testkit/hastack"
)

func main() {
	dir := flag.String("dir", "./var/ha", "folder of the stack (emptied first)")
	replicas := flag.Int("replicas", 3, "triad servers")
	port := flag.Int("port", 8080, "the balancer's port; the servers listen on the next ones")
	nodes := flag.Int("nodes", 3, "PostgreSQL nodes (at least 3)")
	patroni := flag.String("patroni", "./var/patroni/bin", "the folder of patroni and patronictl (make deps-ha puts Patroni 4 there)")
	server := flag.String("server", "./bin/server", "the server binary")
	flag.Parse()
	if err := run(*dir, *server, *patroni, *replicas, *port, *nodes); err != nil {
		log.Fatal(err)
	}
}

func run(dir, server, patroni string, replicas, port, nodes int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	_ = os.RemoveAll(abs)
	settings, err := hastack.BouncerSettings("deploy/pgbouncer/pgbouncer.ini")
	if err != nil {
		return err
	}
	dcs, err := hastack.PatroniDCS("deploy/patroni/patroni.yml")
	if err != nil {
		return err
	}
	patroniDir, err := filepath.Abs(patroni)
	if err != nil {
		return err
	}
	s, err := hastack.Start(ctx, abs, hastack.Options{Nodes: nodes, BouncerSettings: settings, Patroni: patroniDir, DCS: dcs,
		Log: func(f string, a ...any) { log.Printf(f, a...) }})
	if err != nil {
		return err
	}
	defer s.Stop()
	var procs []*exec.Cmd
	var backends []string
	for i := range replicas {
		addr := fmt.Sprintf("127.0.0.1:%d", port+1+i)
		cmd := exec.Command(server, "-mode", "dev", "-addr", addr, "-data-dir", filepath.Join(abs, fmt.Sprintf("r%d", i)),
			"-auth-url", fmt.Sprintf("http://localhost:%d", port), "-auth-dev-port", "0", "-trusted-proxies", "127.0.0.1")
		cmd.Env = append(os.Environ(), "DATABASE_URL="+s.PooledURL("postgres"), "DATABASE_DIRECT_URL="+s.DirectURL("postgres"),
			"DATABASE_READ_URL="+s.ReadURL("postgres"))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			return err
		}
		procs = append(procs, cmd)
		backends = append(backends, addr)
	}
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
			_ = p.Wait()
		}
	}()
	front, err := hastack.StartFront(ctx, abs, port, backends)
	if err != nil {
		return err
	}
	defer front.Stop()
	log.Printf("balancer on http://localhost:%d over %d servers (%s)", port, replicas, strings.Join(backends, ", "))
	log.Printf("DATABASE_URL=%s DATABASE_DIRECT_URL=%s DATABASE_READ_URL=%s", s.PooledURL("postgres"), s.DirectURL("postgres"), s.ReadURL("postgres"))
	log.Printf("Patroni: %s/patronictl -c %s/pg0/patroni.yml list; Ctrl-C stops everything", patroniDir, abs)
	<-ctx.Done()
	time.Sleep(100 * time.Millisecond)
	return nil
}
