package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestBinary_IdleProdServerReturnsStartUpMemory: a prod server that has served nothing gives the
// garbage of its start-up back to the kernel. Before, it kept 50+ MiB of anonymous memory (a heap
// goal set mid start-up, five times over under GOGC 400) until traffic came; now its anonymous
// memory falls to about 10 MiB as soon as it listens. Anonymous memory, not VmRSS: the binary's
// mapped pages depend on the filesystem it runs from; `make bench` prints the whole RSS.
func TestBinary_IdleProdServerReturnsStartUpMemory(t *testing.T) {
	t.Parallel()
	s := startBinary(t, "-mode", "prod", "-database-url", dbtest.NewURL(t), "-orders-client-id", "prod-client",
		"-orders-client-secret", "prod-client-secret-0123456789", "-auth-secret", "0123456789abcdef0123456789abcdef")
	const bound = 24 << 10 // KiB
	var anon int
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		anon = statusKiB(t, s.cmd.Process.Pid, "RssAnon")
		if anon <= bound {
			return
		}
	}
	t.Fatalf("idle prod server holds %d KiB of anonymous memory, want at most %d", anon, bound)
}

// statusKiB reads a field of /proc/<pid>/status in KiB.
func statusKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field+":" {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
