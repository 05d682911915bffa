package platform

import "testing"

// TestPoolSize_FollowsGOMAXPROCS: the pool is DB_MAX_CONNS, else the URL's pool_max_conns, else
// max(4, GOMAXPROCS), GOMAXPROCS being the container's CPU limit, not the node's core count (pgx's
// default, which on 16-core nodes gave every pod 16 connections whatever its CPU limit).
func TestPoolSize_FollowsGOMAXPROCS(t *testing.T) {
	const url = "postgres://u@db/triad"
	for _, c := range []struct {
		name  string
		max   int
		url   string
		procs int
		want  int32
	}{
		{"one CPU", 0, url, 1, 4},
		{"two CPUs", 0, url, 2, 4},
		{"a six-CPU limit on any node", 0, url, 6, 6},
		{"the URL's pool_max_conns", 0, url + "?pool_max_conns=7", 16, 7},
		{"DB_MAX_CONNS wins", 9, url + "?pool_max_conns=7", 16, 9},
	} {
		if got := poolSize(c.max, c.url, c.procs); got != c.want {
			t.Errorf("%s: pool of %d, want %d", c.name, got, c.want)
		}
	}
}
