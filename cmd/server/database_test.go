package main

import "testing"

// TestPoolSize_FollowsGOMAXPROCS: the pool is DB_MAX_CONNS, else the URL's pool_max_conns, else
// max(4, GOMAXPROCS), GOMAXPROCS being the container's CPU limit, not the node's core count (pgx's
// default, which on 16-core nodes gave every pod 16 connections whatever its CPU limit).
func TestPoolSize_FollowsGOMAXPROCS(t *testing.T) {
	const url = "postgres://u@db/triad"
	for _, c := range []struct {
		name  string
		cfg   Config
		url   string
		procs int
		want  int32
	}{
		{"one CPU", Config{}, url, 1, 4},
		{"two CPUs", Config{}, url, 2, 4},
		{"a six-CPU limit on any node", Config{}, url, 6, 6},
		{"the URL's pool_max_conns", Config{}, url + "?pool_max_conns=7", 16, 7},
		{"DB_MAX_CONNS wins", Config{DBMaxConns: 9}, url + "?pool_max_conns=7", 16, 9},
	} {
		if got := poolSize(c.cfg, c.url, c.procs); got != c.want {
			t.Errorf("%s: pool of %d, want %d", c.name, got, c.want)
		}
	}
}
