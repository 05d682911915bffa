package deploy_test

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"

	cnpgv1 "github.com/cloudnative-pg/cloudnative-pg/api/v1"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// decodeCNPG reads one manifest of deploy/cnpg into v strictly: a field the operator's own Go type
// (or Prometheus Operator's, or Kubernetes') does not have fails.
func decodeCNPG(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("cnpg", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, v); err != nil {
		t.Fatalf("cnpg/%s: %v", name, err)
	}
}

// TestCNPG_HighlyAvailablePostgreSQL: deploy/cnpg decodes strictly into CloudNativePG's v1.25.1 API
// types and holds together: a Cluster of three instances with quorum synchronous replication that
// acknowledges a commit on two of them, spread over nodes and archiving; a PgBouncer Pooler in
// transaction mode over it with deploy/pgbouncer/pgbouncer.ini's settings; a ScheduledBackup of it
// by the object store the Cluster archives to; a PodMonitor selecting its instances' pods; and the
// server's database URLs naming the Services the operator creates, with keys the shipped Secret
// has.
func TestCNPG_HighlyAvailablePostgreSQL(t *testing.T) {
	t.Parallel()
	var (
		cluster cnpgv1.Cluster
		pooler  cnpgv1.Pooler
		backup  cnpgv1.ScheduledBackup
		monitor monitoringv1.PodMonitor
		urls    corev1.Secret
	)
	decodeCNPG(t, "cluster.yaml", &cluster)
	decodeCNPG(t, "pooler.yaml", &pooler)
	decodeCNPG(t, "scheduledbackup.yaml", &backup)
	decodeCNPG(t, "podmonitor.yaml", &monitor)
	decodeCNPG(t, "urls.yaml", &urls)

	name := cluster.Name
	spec := cluster.Spec
	if spec.Instances != 3 {
		t.Errorf("Cluster: %d instances, want 3", spec.Instances)
	}
	sync := spec.PostgresConfiguration.Synchronous
	switch {
	case sync == nil:
		t.Error("Cluster: no synchronous replication")
	case sync.Method != cnpgv1.SynchronousReplicaConfigurationMethodAny || sync.Number < 1:
		t.Errorf("Cluster: synchronous %s %d of %d standbys, want quorum (any) of at least 1 leaving a standby to lose", sync.Method, sync.Number, spec.Instances-1)
	case sync.Number > spec.Instances-2:
		t.Errorf("Cluster: ANY %d of %d standbys: losing one standby stops writes", sync.Number, spec.Instances-1)
	}
	if a := spec.Affinity.EnablePodAntiAffinity; a == nil || !*a || spec.Affinity.PodAntiAffinityType != "required" {
		t.Error("Cluster: instances may share a node (want enablePodAntiAffinity, required)")
	}
	if spec.Backup == nil || spec.Backup.BarmanObjectStore == nil || spec.Backup.BarmanObjectStore.DestinationPath == "" {
		t.Error("Cluster: no WAL archive (backup.barmanObjectStore)")
	}
	if spec.Bootstrap == nil || spec.Bootstrap.InitDB == nil || spec.Bootstrap.InitDB.Database != "triad" {
		t.Error("Cluster: the triad database is not bootstrapped")
	}

	if pooler.Spec.Cluster.Name != name || pooler.Spec.Type != cnpgv1.PoolerTypeRW {
		t.Errorf("Pooler: over %q type %q, want %q rw", pooler.Spec.Cluster.Name, pooler.Spec.Type, name)
	}
	if pooler.Spec.PgBouncer == nil || pooler.Spec.PgBouncer.PoolMode != cnpgv1.PgBouncerPoolModeTransaction {
		t.Fatal("Pooler: not PgBouncer in transaction mode")
	}
	// What the operator sets itself is not a Pooler parameter; every other setting of the shipped
	// ini is, with the same value.
	operators := map[string]bool{"listen_addr": true, "listen_port": true, "auth_type": true, "auth_file": true, "pool_mode": true}
	shipped := pgbouncerSettings(t)
	for k, v := range shipped {
		if !operators[k] && pooler.Spec.PgBouncer.Parameters[k] != v {
			t.Errorf("Pooler: %s = %q, deploy/pgbouncer/pgbouncer.ini has %q", k, pooler.Spec.PgBouncer.Parameters[k], v)
		}
	}
	for k := range pooler.Spec.PgBouncer.Parameters {
		if _, ok := shipped[k]; !ok {
			t.Errorf("Pooler: %s is not in deploy/pgbouncer/pgbouncer.ini", k)
		}
	}

	if backup.Spec.Cluster.Name != name || backup.Spec.Schedule == "" || backup.Spec.Method != cnpgv1.BackupMethodBarmanObjectStore {
		t.Errorf("ScheduledBackup: of %q by %q at %q, want %q by barmanObjectStore on a schedule", backup.Spec.Cluster.Name, backup.Spec.Method, backup.Spec.Schedule, name)
	}

	if got := monitor.Spec.Selector.MatchLabels["cnpg.io/cluster"]; got != name || len(monitor.Spec.PodMetricsEndpoints) == 0 ||
		monitor.Spec.PodMetricsEndpoints[0].Port == nil || *monitor.Spec.PodMetricsEndpoints[0].Port != "metrics" {
		t.Errorf("PodMonitor: selects cluster %q, endpoints %+v; want %q's pods on port metrics", got, monitor.Spec.PodMetricsEndpoints, name)
	}

	// The URLs name the Services CloudNativePG creates: <cluster>-rw (the primary), <cluster>-ro
	// (the standbys) and the Pooler's own name; each key is one the shipped Secret has.
	var shippedSecret corev1.Secret
	decodeStrict(t, "secret.example.yaml", &shippedSecret)
	wantHost := map[string]string{"DATABASE_URL": pooler.Name, "DATABASE_DIRECT_URL": name + "-rw",
		"DATABASE_READ_URL": name + "-ro", "DATABASE_MIGRATE_URL": name + "-rw"}
	for key, host := range wantHost {
		raw, ok := urls.StringData[key]
		if !ok {
			t.Errorf("cnpg/urls.yaml: no %s", key)
			continue
		}
		if _, ok := shippedSecret.StringData[key]; !ok {
			t.Errorf("cnpg/urls.yaml: %s is not a key of k8s/secret.example.yaml", key)
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() != host || u.Path != "/triad" {
			t.Errorf("cnpg/urls.yaml: %s = %q, want the triad database on %s", key, raw, host)
		}
	}
	if len(urls.StringData) != len(wantHost) {
		t.Errorf("cnpg/urls.yaml has %d keys, want %d", len(urls.StringData), len(wantHost))
	}
}
