// Package deploy_test checks the deployment artifacts (Dockerfile, deploy/k8s) without a Docker
// engine or a Kubernetes cluster, neither of which exists where the tests run: the manifests are
// decoded strictly into the Kubernetes API types (an unknown or misspelt field fails), held against
// each other and against the server's documented configuration, and the binary is built exactly as
// the Dockerfile builds it, checked to be static, and started with the Deployment's environment to
// answer the Deployment's probes and stop within its grace period.
package deploy_test

import (
	"bufio"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/testkit/dbtest"
	"github.com/triadhq/triad/impl/testkit/serverbin"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// decodeStrict reads one manifest (a path below deploy/k8s) into v, refusing fields the
// Kubernetes type does not have.
func decodeStrict(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("k8s", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

type manifests struct {
	deploy    appsv1.Deployment
	service   corev1.Service
	config    corev1.ConfigMap
	secret    corev1.Secret
	pdb       policyv1.PodDisruptionBudget
	hpa       autoscalingv2.HorizontalPodAutoscaler
	job       batchv1.Job
	container corev1.Container
}

func load(t *testing.T) manifests {
	t.Helper()
	var m manifests
	decodeStrict(t, "base/deployment.yaml", &m.deploy)
	decodeStrict(t, "base/service.yaml", &m.service)
	decodeStrict(t, "base/configmap.yaml", &m.config)
	decodeStrict(t, "base/pdb.yaml", &m.pdb)
	decodeStrict(t, "base/hpa.yaml", &m.hpa)
	decodeStrict(t, "base/migrate-job.yaml", &m.job)
	decodeStrict(t, "secret.example.yaml", &m.secret)
	for _, c := range []struct{ kind, want string }{
		{m.deploy.Kind, "Deployment"}, {m.service.Kind, "Service"},
		{m.config.Kind, "ConfigMap"}, {m.secret.Kind, "Secret"},
		{m.pdb.Kind, "PodDisruptionBudget"}, {m.hpa.Kind, "HorizontalPodAutoscaler"}, {m.job.Kind, "Job"},
	} {
		if c.kind != c.want {
			t.Fatalf("kind %q, want %q", c.kind, c.want)
		}
	}
	if n := len(m.deploy.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%d containers, want 1", n)
	}
	m.container = m.deploy.Spec.Template.Spec.Containers[0]
	return m
}

// documentedEnv is every environment variable named in docs/configuration.md's table.
func documentedEnv(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile("`([A-Z][A-Z0-9_]+)`").FindAllStringSubmatch(string(raw), -1) {
		names[m[1]] = true
	}
	// A row for a family of settings names it `AUTH_<NAME>_CID`, `AUTH_<NAME>_CSECRET` and lists
	// the names: each member is documented.
	for _, line := range strings.Split(string(raw), "\n") {
		family := regexp.MustCompile("`([A-Z_]+)<NAME>([A-Z_]+)`").FindAllStringSubmatch(line, -1)
		if len(family) == 0 {
			continue
		}
		for _, n := range regexp.MustCompile("`([A-Z]+)`").FindAllStringSubmatch(line, -1) {
			for _, f := range family {
				names[f[1]+n[1]+f[2]] = true
			}
		}
	}
	return names
}

// serverEnv is every environment variable the server reads: each flag's usage in its -h names the
// variable that sets its default, as "(NAME)".
func serverEnv(t *testing.T) map[string]bool {
	t.Helper()
	bin := serverbin.Path(t, false)
	// -h prints the usage and exits non-zero (flag.ErrHelp ends the start); the text is what counts.
	out, _ := exec.Command(bin, "-h").CombinedOutput()
	names := map[string]bool{}
	for _, m := range regexp.MustCompile(`\(([A-Z][A-Z0-9_]+)\)`).FindAllStringSubmatch(string(out), -1) {
		names[m[1]] = true
	}
	if !names["DATABASE_URL"] || !names["MODE"] {
		t.Fatalf("the server's -h names no settings:\n%s", out)
	}
	return names
}

func TestManifests_AgreeWithEachOtherAndTheServer(t *testing.T) {
	t.Parallel()
	m := load(t)
	pod := m.deploy.Spec.Template

	for k, v := range m.deploy.Spec.Selector.MatchLabels {
		if pod.Labels[k] != v {
			t.Errorf("deployment selector %s=%s does not select its own pods", k, v)
		}
	}
	for k, v := range m.service.Spec.Selector {
		if pod.Labels[k] != v {
			t.Errorf("service selector %s=%s selects no pod of the deployment", k, v)
		}
	}

	ports := map[string]int32{}
	for _, p := range m.container.Ports {
		ports[p.Name] = p.ContainerPort
	}
	for _, sp := range m.service.Spec.Ports {
		if _, ok := ports[sp.TargetPort.String()]; !ok {
			t.Errorf("service targets port %q, which the container does not name", sp.TargetPort.String())
		}
	}
	probes := []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"readiness", m.container.ReadinessProbe, "/readyz"}, {"liveness", m.container.LivenessProbe, "/healthz"}}
	for _, p := range probes {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s probe: want an HTTP GET of %s", p.name, p.path)
			continue
		}
		if p.probe.HTTPGet.Path != p.path {
			t.Errorf("%s probe path %q, want %q", p.name, p.probe.HTTPGet.Path, p.path)
		}
		if _, ok := ports[p.probe.HTTPGet.Port.String()]; !ok {
			t.Errorf("%s probe port %q is not a container port", p.name, p.probe.HTTPGet.Port.String())
		}
	}

	// What the container reads: every key of a ConfigMap or Secret it takes whole (envFrom), then
	// its env list, which wins. Each must be a setting the server has, and is documented.
	known := serverEnv(t)
	documented := documentedEnv(t)
	readKeys := map[string]bool{} // ConfigMap keys the Deployment reads
	for _, src := range m.container.EnvFrom {
		switch {
		case src.ConfigMapRef != nil:
			if src.ConfigMapRef.Name != m.config.Name {
				t.Errorf("envFrom reads config map %s, which does not exist", src.ConfigMapRef.Name)
			}
			for k := range m.config.Data {
				readKeys[k] = true
			}
		case src.SecretRef != nil:
			t.Errorf("envFrom reads secret %s whole: name each secret in env so the manifest says which it needs", src.SecretRef.Name)
		}
		if src.Prefix != "" {
			t.Errorf("envFrom prefix %q renames the settings the server reads", src.Prefix)
		}
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range m.container.Env {
		env[e.Name] = e
		if ref := e.ValueFrom; ref != nil {
			switch {
			case ref.SecretKeyRef != nil:
				if _, ok := m.secret.StringData[ref.SecretKeyRef.Key]; !ok || ref.SecretKeyRef.Name != m.secret.Name {
					t.Errorf("env %s reads secret %s/%s, which the secret template lacks", e.Name, ref.SecretKeyRef.Name, ref.SecretKeyRef.Key)
				}
			case ref.ConfigMapKeyRef != nil:
				if _, ok := m.config.Data[ref.ConfigMapKeyRef.Key]; !ok || ref.ConfigMapKeyRef.Name != m.config.Name {
					t.Errorf("env %s reads config map %s/%s, which does not exist", e.Name, ref.ConfigMapKeyRef.Name, ref.ConfigMapKeyRef.Key)
				}
				readKeys[ref.ConfigMapKeyRef.Key] = true
			}
		}
	}
	for k := range m.config.Data {
		if !readKeys[k] {
			t.Errorf("config map key %s is read by no environment variable of the deployment", k)
		}
		if e, ok := env[k]; ok && len(m.container.EnvFrom) > 0 && (e.ValueFrom == nil || e.ValueFrom.ConfigMapKeyRef == nil) {
			t.Errorf("config map key %s is ignored: the deployment's own env %s wins over envFrom", k, k)
		}
	}
	read := map[string]bool{}
	for k := range readKeys {
		read[k] = true
	}
	for k := range env {
		read[k] = true
	}
	for name := range read {
		if !known[name] {
			t.Errorf("env %s is no setting of the server (not in its -h)", name)
		}
		if !documented[name] {
			t.Errorf("env %s is not a setting documented in docs/configuration.md", name)
		}
	}
	if env["MODE"].Value != "prod" {
		t.Errorf("MODE is %q, want prod", env["MODE"].Value)
	}
	for _, secret := range []string{"DATABASE_URL", "AUTH_SECRET", "ORDERS_CLIENT_SECRET"} {
		if e, ok := env[secret]; !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s must come from the Secret", secret)
		}
	}

	// Graceful shutdown: the kubelet runs preStop (if any), then SIGTERM, on which the server drains
	// (DRAIN_DELAY) and finishes in-flight requests (SHUTDOWN_TIMEOUT), then kills at the grace period.
	var stop time.Duration
	for _, name := range []string{"DRAIN_DELAY", "SHUTDOWN_TIMEOUT"} {
		d, err := time.ParseDuration(env[name].Value)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		stop += d
	}
	if l := m.container.Lifecycle; l != nil && l.PreStop != nil && l.PreStop.Sleep != nil {
		stop += time.Duration(l.PreStop.Sleep.Seconds) * time.Second
	}
	grace := time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	if stop >= grace {
		t.Errorf("preStop + DRAIN_DELAY + SHUTDOWN_TIMEOUT (%v) do not fit in the grace period %v", stop, grace)
	}

	sc := pod.Spec.SecurityContext
	if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("pod must run as a non-root numeric user")
	} else if d := dockerfile(t); d.user != strconv.FormatInt(*sc.RunAsUser, 10) {
		t.Errorf("pod runs as %d, the image as %q", *sc.RunAsUser, d.user)
	}
}

// image is what the test reads from the Dockerfile.
type image struct {
	stages     int
	build      string // the RUN line holding `go build`
	user       string // the final stage's numeric user
	entrypoint string
	copied     map[string]bool // destinations of COPY --from in the final stage
}

func dockerfile(t *testing.T) image {
	t.Helper()
	f, err := os.Open("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var img image
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			img.stages++
			img.user, img.entrypoint, img.copied = "", "", map[string]bool{}
		case "RUN":
			if strings.Contains(rest, "go build") {
				img.build = rest
			}
		case "USER":
			img.user, _, _ = strings.Cut(rest, ":")
		case "ENTRYPOINT":
			img.entrypoint = rest
		case "COPY":
			if f := strings.Fields(rest); strings.HasPrefix(f[0], "--from=") {
				img.copied[f[len(f)-1]] = true
			}
		}
	}
	return img
}

func TestDockerfile_StaticNonRootBinaryThatServesTheProbes(t *testing.T) {
	t.Parallel()
	img := dockerfile(t)
	if img.stages < 2 {
		t.Fatalf("%d stages: want a build stage and a runtime stage", img.stages)
	}
	if n, err := strconv.Atoi(img.user); err != nil || n == 0 {
		t.Fatalf("final stage USER %q: want a numeric non-root user", img.user)
	}
	var entry []string
	if err := yaml.Unmarshal([]byte(img.entrypoint), &entry); err != nil || len(entry) == 0 || !img.copied[entry[0]] {
		t.Fatalf("ENTRYPOINT %s does not run the binary copied from the build stage", img.entrypoint)
	}

	// Build as the Dockerfile does: its RUN line run by a shell (as docker does), its build
	// arguments given, with only the output moved into the test's folder.
	if !strings.HasPrefix(img.build, "CGO_ENABLED=0 go build ") || !strings.Contains(img.build, " -o /out/server ") {
		t.Fatalf("build line %q: want CGO_ENABLED=0 go build ... -o /out/server ...", img.build)
	}
	bin := filepath.Join(t.TempDir(), "server")
	build := exec.Command("sh", "-c", strings.Replace(img.build, " -o /out/server ", " -o "+bin+" ", 1))
	build.Dir = ".."
	build.Env = append(os.Environ(), "VERSION=v9.9.9-test", "REVISION=0123abcd-test")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ef, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary needs a dynamic loader: a distroless static image cannot run it")
		}
	}
	ef.Close()

	// Start it with the Deployment's environment, secrets filled in as an operator would.
	m := load(t)
	port := freePort(t)
	secrets := map[string]string{
		"DATABASE_URL":         dbtest.NewURL(t),
		"AUTH_SECRET":          "a-deployment-test-secret-0123456789abcdef",
		"ORDERS_CLIENT_SECRET": "a-deployment-test-client-secret-0123456789",
	}
	// The init step first: on a database without the schema it waits, until the migration Job has
	// run; then the server starts.
	secrets["DATABASE_URL"] = dbtest.NewEmptyURL(t)
	secrets["DATABASE_MIGRATE_URL"] = secrets["DATABASE_URL"]
	migrateBeforeServing(t, bin, m, secrets)
	metricsPort := freePort(t)
	cmd := exec.Command(bin)
	cmd.Env = containerEnv(t, m, m.container, secrets, map[string]string{
		"ADDR": fmt.Sprintf("127.0.0.1:%d", port), "METRICS_ADDR": fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"TRUSTED_PROXIES": operatorTrustedProxies}) // the placeholder filled in, as the operator must
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	for _, probe := range []*corev1.Probe{m.container.ReadinessProbe, m.container.LivenessProbe} {
		waitStatus(t, base+probe.HTTPGet.Path, 200, exited, log)
	}
	// /metrics answers on its own port only, not on the one behind the Service.
	waitStatus(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort), 200, exited, log)
	waitStatus(t, base+"/metrics", 404, exited, log)
	// The build arguments name the build in triad_build_info.
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `revision="0123abcd-test",version="v9.9.9-test"} 1`; !strings.Contains(string(scrape), want) {
		t.Errorf("triad_build_info does not name the build (%s)", want)
	}

	// SIGTERM (what the kubelet sends after preStop) must end the process well within the grace.
	grace := time.Duration(*m.deploy.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, log.String())
		}
	case <-time.After(grace):
		t.Fatalf("still running %v after SIGTERM", grace)
	}
}

func waitStatus(t *testing.T, url string, want int, exited <-chan error, log fmt.Stringer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return
			}
		}
		select {
		case err := <-exited:
			t.Fatalf("server exited (%v) before %s answered %d:\n%s", err, url, want, log)
		case <-ctx.Done():
			t.Fatalf("%s never answered %d:\n%s", url, want, log)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lockedBuffer collects the server's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestConfigMap_TrustsOnlyTheIngress: the shipped ConfigMap trusts no proxy until the operator names
// the ingress (its placeholder stops the start, so it cannot be forgotten), and the value an operator
// fills in as docs/deploy.md says trusts the ingress pods only: another pod, a VPN client or anyone
// public writing X-Forwarded-For is not believed.
func TestConfigMap_TrustsOnlyTheIngress(t *testing.T) {
	t.Parallel()
	m := load(t)
	shipped := m.config.Data["TRUSTED_PROXIES"]
	if _, err := web.ParseTrustedProxies(shipped); err == nil {
		t.Fatalf("TRUSTED_PROXIES %q is a working value: want a placeholder the operator must replace with the ingress CIDR", shipped)
	}
	trusted, err := web.ParseTrustedProxies(operatorTrustedProxies)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]bool{
		"10.244.3.7:0": true, "10.244.1.7:0": false, "172.17.0.5:0": false, "192.168.49.2:0": false, "[fd00:10:244::7]:0": false,
		"203.0.113.9:0": false, "8.8.8.8:0": false, "[2001:db8::1]:0": false,
	} {
		if got := web.Trusts(trusted, addr); got != want {
			t.Errorf("TRUSTED_PROXIES %q trusts %s: %v, want %v", operatorTrustedProxies, addr, got, want)
		}
	}
	docs, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(docs), shipped) || !strings.Contains(string(docs), operatorTrustedProxies) {
		t.Errorf("docs/deploy.md does not say how to replace %q (with e.g. %s)", shipped, operatorTrustedProxies)
	}
}

// operatorTrustedProxies is what the tests fill the ConfigMap's placeholder with, as an operator
// would: the ingress controller pods' CIDR of an example cluster (docs/deploy.md).
const operatorTrustedProxies = "10.244.3.0/24"
