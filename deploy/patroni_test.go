package deploy_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/triadhq/triad/impl/testkit/hastack"
)

// TestPatroni_QuorumFailsafeAndWatchdog: deploy/patroni/patroni.yml, whose bootstrap.dcs the HA
// stack of make run-ha and make test-ha runs as it is (hastack.PatroniDCS), asks for quorum commit
// on one standby besides the primary, failsafe_mode, an immediate hand-over of a crashed
// PostgreSQL, timing Patroni 4 accepts as written (it raises a ttl under 20 s and a retry_timeout
// under 3 s) with loop_wait + 2 × retry_timeout <= ttl, and a required watchdog in production.
func TestPatroni_QuorumFailsafeAndWatchdog(t *testing.T) {
	t.Parallel()
	path := filepath.Join("patroni", "patroni.yml")
	raw, err := hastack.PatroniDCS(path)
	if err != nil {
		t.Fatal(err)
	}
	var dcs struct {
		TTL                  int    `yaml:"ttl"`
		LoopWait             int    `yaml:"loop_wait"`
		RetryTimeout         int    `yaml:"retry_timeout"`
		SynchronousMode      string `yaml:"synchronous_mode"`
		SynchronousNodeCount int    `yaml:"synchronous_node_count"`
		Strict               bool   `yaml:"synchronous_mode_strict"`
		FailsafeMode         bool   `yaml:"failsafe_mode"`
		PrimaryStartTimeout  *int   `yaml:"primary_start_timeout"`
	}
	if err := yaml.Unmarshal([]byte(raw), &dcs); err != nil {
		t.Fatal(err)
	}
	if dcs.SynchronousMode != "quorum" || dcs.SynchronousNodeCount != 1 || dcs.Strict {
		t.Errorf("synchronous_mode %q, synchronous_node_count %d, strict %v; want quorum, 1, not strict", dcs.SynchronousMode, dcs.SynchronousNodeCount, dcs.Strict)
	}
	if !dcs.FailsafeMode {
		t.Error("failsafe_mode is off: an etcd outage demotes the primary")
	}
	if dcs.PrimaryStartTimeout == nil || *dcs.PrimaryStartTimeout != 0 {
		t.Error("primary_start_timeout is not 0: a crashed PostgreSQL is recovered in place before any failover")
	}
	if dcs.TTL < 20 || dcs.RetryTimeout < 3 || dcs.LoopWait < 1 || dcs.LoopWait+2*dcs.RetryTimeout > dcs.TTL {
		t.Errorf("ttl %d, loop_wait %d, retry_timeout %d: Patroni 4 would change them (ttl >= 20, retry_timeout >= 3, loop_wait + 2 × retry_timeout <= ttl)", dcs.TTL, dcs.LoopWait, dcs.RetryTimeout)
	}
	var whole struct {
		Watchdog struct {
			Mode string `yaml:"mode"`
		} `yaml:"watchdog"`
	}
	decodeYAML(t, path, &whole)
	if whole.Watchdog.Mode != "required" {
		t.Errorf("watchdog mode %q, want required in production", whole.Watchdog.Mode)
	}
}

// decodeYAML reads the YAML file at path (below deploy/) into v.
func decodeYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
