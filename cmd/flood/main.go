// Command flood is the login-flood load run: it starts the server binary in prod mode with its own
// managed PostgreSQL, drives an unauthenticated login and registration flood at the orders and
// brands surfaces, and meanwhile has one real user log in every half second from another address.
// It reports the server's peak resident memory and the real user's login latencies, and exits
// with status 1 when the peak exceeds -max-rss or the real user's median login exceeds
// -max-median (a login that was refused counts as slower than any that succeeded).
//
// With -lists N it is instead the list-fairness run (make list-fairness): N customers, each with a
// million orders of its own, page deep through them by price while a bystander reads its first
// page; it fails when the bystander's median exceeds -lists-max-median.
//
// It is a load run, not a test: make flood runs it (docs/operations.md); make test does not.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "flood:", err)
		os.Exit(2)
	}
}

type config struct {
	server    string
	conns     int
	sources   int
	duration  time.Duration
	every     time.Duration
	maxRSS    int64
	maxMedian time.Duration
	keep      bool
	dbConns   int
}

func run() error {
	var c config
	var maxRSSMiB int64
	flag.StringVar(&c.server, "server", "bin/server", "the server binary to start")
	flag.IntVar(&c.conns, "conns", 120, "flood connections (half logins, half registrations, split over orders and brands)")
	flag.IntVar(&c.sources, "sources", 1, "loopback addresses the flood connects from (127.0.1.1 onward): 1 is one attacking machine; many spread the flood as a botnet would, past the per-address login cap")
	flag.DurationVar(&c.duration, "duration", 20*time.Second, "how long the flood lasts")
	flag.DurationVar(&c.every, "every", 500*time.Millisecond, "the real user's login interval")
	flag.Int64Var(&maxRSSMiB, "max-rss", 256, "fail when the server's peak RSS exceeds this many MiB")
	flag.DurationVar(&c.maxMedian, "max-median", time.Second, "fail when the real user's median login time exceeds this")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary data folder and server log")
	flag.IntVar(&c.dbConns, "db-max-conns", 0, "the server's DB_MAX_CONNS (0: its default)")
	var lists listsConfig
	flag.IntVar(&lists.hammers, "lists", 0, "instead of the login flood, the list-fairness run (make list-fairness): this many customers page deep through their own lists while a bystander reads its first page")
	flag.IntVar(&lists.ordersEach, "lists-orders", 1_000_000, "orders of each paging customer (-lists)")
	flag.IntVar(&lists.conns, "lists-conns", 8, "connections of each paging customer (-lists)")
	flag.IntVar(&lists.page, "lists-page", 100, "the page the customers read (-lists)")
	flag.IntVar(&lists.size, "lists-size", 100, "its size (-lists)")
	flag.DurationVar(&lists.maxMedian, "lists-max-median", 20*time.Millisecond, "fail when the bystander's median page 0 under the paging exceeds this (-lists)")
	flag.Parse()
	lists.duration = c.duration
	c.maxRSS = maxRSSMiB << 20
	if c.conns < 4 || c.sources < 1 || c.sources > 250*250 {
		return errors.New("want -conns >= 4 and 1 <= -sources <= 62500")
	}

	dir, err := os.MkdirTemp("", "triad-flood-")
	if err != nil {
		return err
	}
	if !c.keep {
		defer os.RemoveAll(dir)
	}
	srv, err := startServer(c.server, dir, c.dbConns)
	if err != nil {
		return err
	}
	defer srv.stop()
	fmt.Printf("server pid %d on %s (prod mode, DB_MAX_CONNS=%d, managed PostgreSQL in %s)\n", srv.cmd.Process.Pid, srv.base, c.dbConns, dir)
	if lists.hammers > 0 {
		ok, err := runLists(srv, dir, lists)
		if serr := srv.stop(); err == nil && serr != nil {
			err = serr
		}
		if err != nil {
			return err
		}
		if !ok {
			os.Exit(1)
		}
		return nil
	}

	real := newUser(srv, "127.0.0.2")
	if err := real.register(); err != nil {
		return fmt.Errorf("registering the real user: %w", err)
	}
	baseRSS := rss(srv.cmd.Process.Pid, "VmRSS")

	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	var wg sync.WaitGroup
	peak := &peakSampler{pid: srv.cmd.Process.Pid}
	wg.Go(func() { peak.run(ctx) })
	stats := &floodStats{}
	for i := range c.conns {
		src := sourceAddr(i % c.sources)
		wg.Go(func() { flood(ctx, srv, src, i, stats) })
	}
	var logins []login
	wg.Go(func() { logins = real.loginEvery(ctx, c.every) })
	wg.Wait()
	hwm := rss(srv.cmd.Process.Pid, "VmHWM")

	fmt.Printf("flood: %d connections from %d addresses for %s: %s\n", c.conns, c.sources, c.duration, stats)
	fmt.Printf("server RSS: %.0f MiB before the flood, peak %.0f MiB sampled, VmHWM %.0f MiB (limit %d MiB)\n",
		mib(baseRSS), mib(peak.max.Load()), mib(hwm), maxRSSMiB)
	median, ok, summary := summarize(logins)
	fmt.Printf("real user: %s\n", summary)

	var failures []string
	if top := max(hwm, peak.max.Load()); top > c.maxRSS {
		failures = append(failures, fmt.Sprintf("peak RSS %.0f MiB > %d MiB", mib(top), maxRSSMiB))
	}
	if !ok || median > c.maxMedian {
		failures = append(failures, fmt.Sprintf("real user's median login %s > %s", fmtMedian(median, ok), c.maxMedian))
	}
	if err := srv.stop(); err != nil {
		failures = append(failures, "server: "+err.Error())
	}
	if len(failures) > 0 {
		fmt.Println("FAIL:", strings.Join(failures, "; "))
		if c.keep {
			fmt.Println("server log:", srv.logPath)
		}
		os.Exit(1)
	}
	fmt.Println("PASS")
	return nil
}
