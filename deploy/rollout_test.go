package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

// rendered is one kustomization's objects, each decoded strictly into its type.
type rendered struct {
	deploy  *appsv1.Deployment
	hpa     *autoscalingv2.HorizontalPodAutoscaler
	service *corev1.Service
	netpol  *networkingv1.NetworkPolicy
}

func decodeRendered(t *testing.T, dir string) rendered {
	t.Helper()
	var r rendered
	for _, o := range render(t, dir) {
		v := typed[o.kind]()
		dec := json.NewDecoder(bytes.NewReader(o.raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s: %s/%s: %v", dir, o.kind, o.name, err)
		}
		switch x := v.(type) {
		case *appsv1.Deployment:
			r.deploy = x
		case *autoscalingv2.HorizontalPodAutoscaler:
			r.hpa = x
		case *corev1.Service:
			r.service = x
		case *networkingv1.NetworkPolicy:
			r.netpol = x
		}
	}
	if r.deploy == nil || r.hpa == nil || r.service == nil || r.netpol == nil {
		t.Fatalf("%s renders no Deployment, HPA, Service or NetworkPolicy", dir)
	}
	return r
}

// envOf is a container's env list by name.
func envOf(c corev1.Container) map[string]corev1.EnvVar {
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	return env
}

// TestManifests_RolloutAndFailureBehaviour checks, on the rendered base and both overlays, what
// keeps a rollout and a database blip from hurting (docs/deploy.md, "Kubernetes"): the HPA alone
// owns the replica count; an init step of the same image waits for the release's migrations before
// the server starts; /metrics has a port of its own that the Service does not expose; readiness
// outlasts a blip of a second or two and liveness never asks the database; a NetworkPolicy lets
// the API port in from the ingress only, the metrics port from monitoring only, and out DNS, the
// database, the pooler, SMTP and HTTPS.
func TestManifests_RolloutAndFailureBehaviour(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"k8s/base", "k8s/overlays/dev", "k8s/overlays/prod"} {
		r := decodeRendered(t, dir)
		pod := r.deploy.Spec.Template.Spec
		c := pod.Containers[0]

		if r.deploy.Spec.Replicas != nil {
			t.Errorf("%s: replicas %d beside the HPA", dir, *r.deploy.Spec.Replicas)
		}
		if ref := r.hpa.Spec.ScaleTargetRef; ref.Kind != "Deployment" || ref.Name != r.deploy.Name {
			t.Errorf("%s: the HPA scales %s/%s", dir, ref.Kind, ref.Name)
		}

		// Migrations before serving.
		if len(pod.InitContainers) != 1 {
			t.Fatalf("%s: %d init containers, want the wait-schema step", dir, len(pod.InitContainers))
		}
		init := pod.InitContainers[0]
		ienv, senv := envOf(init), envOf(c)
		if init.Image != c.Image || ienv["MODE"].Value != "wait-schema" {
			t.Errorf("%s: the init step runs %s with MODE=%q, want the server's image %s with MODE=wait-schema", dir, init.Image, ienv["MODE"].Value, c.Image)
		}
		for _, name := range []string{"DATABASE_URL", "DATABASE_DIRECT_URL"} {
			i, s := ienv[name].ValueFrom, senv[name].ValueFrom
			if i == nil || s == nil || i.SecretKeyRef == nil || s.SecretKeyRef == nil || i.SecretKeyRef.Key != s.SecretKeyRef.Key {
				t.Errorf("%s: the init step must read %s from the server's Secret key (it waits for the database the server uses)", dir, name)
			}
		}

		// /metrics on its own port, which the Service does not route to.
		ports := map[string]int32{}
		for _, p := range c.Ports {
			ports[p.Name] = p.ContainerPort
		}
		_, port, err := net.SplitHostPort(senv["METRICS_ADDR"].Value)
		if mp, ok := ports["metrics"]; err != nil || !ok || port != strconv.Itoa(int(mp)) || mp == ports["http"] {
			t.Errorf("%s: METRICS_ADDR %q must be the container port named metrics (%d), apart from http", dir, senv["METRICS_ADDR"].Value, mp)
		}
		for _, sp := range r.service.Spec.Ports {
			if tp := sp.TargetPort; tp.String() == "metrics" || tp.IntValue() == int(ports["metrics"]) {
				t.Errorf("%s: the Service routes port %d to the metrics port", dir, sp.Port)
			}
		}

		// Readiness outlasts a blip: it fails only after several checks spanning well over 2 s,
		// and each check waits longer than /readyz's own 2 s bound on its ping.
		rp := c.ReadinessProbe
		if rp == nil || rp.HTTPGet == nil || rp.HTTPGet.Path != "/readyz" {
			t.Fatalf("%s: readiness must be GET /readyz", dir)
		}
		if rp.FailureThreshold < 2 || rp.PeriodSeconds*(rp.FailureThreshold-1) < 4 || rp.TimeoutSeconds < 3 {
			t.Errorf("%s: readiness period %d s × failures %d, timeout %d s: a 1-2 s database blip would take every pod out at once", dir, rp.PeriodSeconds, rp.FailureThreshold, rp.TimeoutSeconds)
		}
		for _, p := range []*corev1.Probe{c.LivenessProbe, c.StartupProbe} {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
				t.Errorf("%s: liveness and startup must be /healthz, which never asks the database", dir)
			}
		}

		checkNetworkPolicy(t, dir, r, ports)
	}
}

func checkNetworkPolicy(t *testing.T, dir string, r rendered, ports map[string]int32) {
	t.Helper()
	np := r.netpol.Spec
	for k, v := range np.PodSelector.MatchLabels {
		if r.deploy.Spec.Template.Labels[k] != v {
			t.Errorf("%s: the NetworkPolicy selects %s=%s, no pod of the Deployment", dir, k, v)
		}
	}
	if len(np.PodSelector.MatchLabels) == 0 || !slices.Contains(np.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(np.PolicyTypes, networkingv1.PolicyTypeEgress) {
		t.Fatalf("%s: the NetworkPolicy must select the pods and restrict ingress and egress", dir)
	}
	// Each ingress rule names its sources and its ports; the API and the metrics ports are let in
	// by different rules (the ingress never reaches /metrics).
	from := map[string]string{} // port name -> the namespace its rule admits
	for _, rule := range np.Ingress {
		if len(rule.From) == 0 || len(rule.Ports) == 0 {
			t.Errorf("%s: an ingress rule without sources or ports admits everyone or every port", dir)
			continue
		}
		for _, p := range rule.Ports {
			if p.Port == nil {
				t.Errorf("%s: an ingress rule admits every port", dir)
				continue
			}
			for _, f := range rule.From {
				if f.NamespaceSelector == nil && f.PodSelector == nil || f.IPBlock != nil {
					t.Errorf("%s: an ingress source that is not a namespace or pods of the cluster", dir)
					continue
				}
				from[p.Port.String()] = f.NamespaceSelector.String()
			}
		}
	}
	if from["http"] == "" || from["metrics"] == "" || from["http"] == from["metrics"] {
		t.Errorf("%s: want the http port from the ingress and the metrics port from monitoring, each alone: %v", dir, from)
	}
	for name := range from {
		if _, ok := ports[name]; !ok {
			t.Errorf("%s: the NetworkPolicy admits port %s, which the container does not name", dir, name)
		}
	}
	out := map[int]bool{}
	for _, rule := range np.Egress {
		for _, p := range rule.Ports {
			out[p.Port.IntValue()] = true
		}
	}
	for _, want := range []struct {
		port int
		what string
	}{{53, "DNS"}, {5432, "PostgreSQL"}, {6432, "PgBouncer"}, {587, "SMTP"}, {443, "the identity providers"}, {4318, "the OTLP trace collector"}} {
		if !out[want.port] {
			t.Errorf("%s: no egress to port %d (%s)", dir, want.port, want.what)
		}
	}
}

// pgbouncerSettings is the [pgbouncer] section of the shipped deploy/pgbouncer/pgbouncer.ini.
func pgbouncerSettings(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("pgbouncer/pgbouncer.ini")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	set, section := map[string]string{}, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = line
		case section == "[pgbouncer]":
			k, v, _ := strings.Cut(line, "=")
			set[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return set
}

// checkBudget holds the most pods (the HPA's maximum plus the surge) with pools of conns against
// the connection limits (docs/scaling.md, "The connection budget"): without a pooler, each pod's
// pool, revocation listener, one Telegram bot's session and a starting pod's start-up lock on the
// primary, and its read pool on the standby (DATABASE_READ_URL), each within PostgreSQL's default;
// behind the shipped PgBouncer, its clients within max_client_conn and the primary's share
// (PgBouncer's pool and reserve plus the direct sessions) within PostgreSQL's default.
func checkBudget(t *testing.T, pods, conns int) {
	t.Helper()
	if need := pods*(conns+2) + 3; need > maxConnections {
		t.Errorf("primary without a pooler: %d pods × (%d + 2) + 3 = %d connections, more than PostgreSQL's default %d", pods, conns, need, maxConnections)
	}
	if need := pods * conns; need > maxConnections {
		t.Errorf("standby: %d pods × %d (the read pool) = %d connections, more than PostgreSQL's default %d", pods, conns, need, maxConnections)
	}
	pb := pgbouncerSettings(t)
	atoi := func(k string) int {
		n, err := strconv.Atoi(pb[k])
		if err != nil {
			t.Fatalf("pgbouncer.ini %s = %q: %v", k, pb[k], err)
		}
		return n
	}
	if need, have := pods*conns, atoi("max_client_conn"); need > have {
		t.Errorf("PgBouncer: %d pods × %d = %d clients, more than its max_client_conn %d", pods, conns, need, have)
	}
	if need := atoi("default_pool_size") + atoi("reserve_pool_size") + pods*2 + 3; need > maxConnections {
		t.Errorf("primary behind PgBouncer: its pool and reserve + %d pods × 2 direct + 3 = %d, more than PostgreSQL's default %d", pods, need, maxConnections)
	}
}

// containerEnv is the environment the kubelet gives container c of the Deployment: the ConfigMap's
// keys when it reads them whole, then its env list (which wins), secrets taken from secrets by
// key; set replaces values that name the test's own ports, and DATA_DIR is a scratch folder.
func containerEnv(t *testing.T, m manifests, c corev1.Container, secrets map[string]string, set map[string]string) []string {
	t.Helper()
	podEnv := map[string]string{}
	for _, src := range c.EnvFrom {
		if src.ConfigMapRef != nil {
			for k, v := range m.config.Data {
				podEnv[k] = v
			}
		}
	}
	for k, v := range set { // the ConfigMap's placeholders, filled in as the operator must
		if _, ok := podEnv[k]; ok {
			podEnv[k] = v
		}
	}
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			var ok bool
			if v, ok = secrets[e.ValueFrom.SecretKeyRef.Key]; !ok {
				if o := e.ValueFrom.SecretKeyRef.Optional; o == nil || !*o {
					t.Fatalf("%s reads secret key %s, which the test did not fill in", c.Name, e.ValueFrom.SecretKeyRef.Key)
				}
				continue // an optional key the Secret lacks: the variable is not set
			}
		case e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil:
			v = m.config.Data[e.ValueFrom.ConfigMapKeyRef.Key]
		}
		if e.Name == "DATA_DIR" {
			v = t.TempDir()
		}
		if s, ok := set[e.Name]; ok {
			v = s
		}
		podEnv[e.Name] = v
	}
	env := []string{"HOME=" + t.TempDir()}
	for k, v := range podEnv {
		env = append(env, k+"="+v)
	}
	return env
}

// migrateBeforeServing runs the Deployment's init step on the (empty) database of secrets: it must
// keep waiting, saying so, until the migration Job (its container, with its environment) has run,
// and then exit 0 by itself.
func migrateBeforeServing(t *testing.T, bin string, m manifests, secrets map[string]string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), secrets["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	// The Job grants the servers' role, which the operator made beforehand (cluster-wide: another
	// test of this process may have made it).
	_, err = conn.Exec(context.Background(), `DO $$ BEGIN CREATE ROLE triad_app LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`)
	conn.Close(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	init := exec.Command(bin)
	init.Env = containerEnv(t, m, m.deploy.Spec.Template.Spec.InitContainers[0], secrets, nil)
	log := &lockedBuffer{}
	init.Stdout, init.Stderr = log, log
	if err := init.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- init.Wait() }()
	t.Cleanup(func() { _ = init.Process.Kill() })
	deadline := time.After(60 * time.Second)
	for !strings.Contains(log.String(), "waiting for the release's migrations") {
		select {
		case err := <-exited:
			t.Fatalf("the init step exited (%v) on a database without the schema:\n%s", err, log)
		case <-deadline:
			t.Fatalf("the init step never said it waits for the migrations:\n%s", log)
		case <-time.After(50 * time.Millisecond):
		}
	}

	job := exec.Command(bin)
	job.Env = containerEnv(t, m, m.job.Spec.Template.Spec.Containers[0], secrets, nil)
	if out, err := job.CombinedOutput(); err != nil {
		t.Fatalf("the migration Job: %v\n%s", err, out)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the init step after the migration: %v\n%s", err, log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the init step still waits 30 s after the migration Job:\n%s", log)
	}
}
