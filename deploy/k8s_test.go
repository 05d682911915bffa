package deploy_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"
)

// secretSetting says which of the server's settings are secrets (credentials, keys, URLs that may
// carry a password): each needs a slot in the Secret, never a ConfigMap key.
var secretSetting = regexp.MustCompile(`SECRET|PASSWORD|PASSWD|_TOKEN$|^DATABASE_.*URL$|^AUTH_PROVIDERS$|^AUTH_CUSTOM_PROVIDERS$|^AUTH_APPLE_KEY$|^AUTH_AVATAR_STORE$`)

// maxConnections is PostgreSQL's default max_connections less its superuser_reserved_connections:
// what the shipped sizes must fit in without a pooler (docs/scaling.md, "The connection budget").
const maxConnections = 100 - 3

// TestManifests_CompleteForProduction: a PodDisruptionBudget and an HPA over the Deployment's pods,
// a startup probe, spread over zones and nodes, a migration Job running the same image as the
// owner with -mode migrate, a Secret slot for every secret setting of the server (and none in the
// ConfigMap), and resources, GOMAXPROCS, DB_MAX_CONNS and the replica bounds within the connection
// budget.
func TestManifests_CompleteForProduction(t *testing.T) {
	t.Parallel()
	m := load(t)
	pod := m.deploy.Spec.Template
	selects := func(what string, sel map[string]string) {
		t.Helper()
		if len(sel) == 0 {
			t.Errorf("%s selects nothing", what)
		}
		for k, v := range sel {
			if pod.Labels[k] != v {
				t.Errorf("%s selector %s=%s selects no pod of the deployment", what, k, v)
			}
		}
	}

	if m.pdb.Spec.Selector == nil || (m.pdb.Spec.MaxUnavailable == nil && m.pdb.Spec.MinAvailable == nil) {
		t.Fatal("the PodDisruptionBudget needs a selector and a bound")
	}
	selects("PodDisruptionBudget", m.pdb.Spec.Selector.MatchLabels)

	ref := m.hpa.Spec.ScaleTargetRef
	if ref.Kind != "Deployment" || ref.Name != m.deploy.Name {
		t.Errorf("the HPA scales %s/%s, not the Deployment %s", ref.Kind, ref.Name, m.deploy.Name)
	}
	if m.hpa.Spec.MinReplicas == nil || *m.hpa.Spec.MinReplicas < 2 || m.hpa.Spec.MaxReplicas < *m.hpa.Spec.MinReplicas {
		t.Errorf("the HPA's bounds: want at least 2 replicas (one may be disrupted) and max >= min")
	}
	cpuRequest := m.container.Resources.Requests.Cpu()
	if cpuRequest.IsZero() {
		t.Error("no CPU request: the HPA's utilization target has nothing to be a share of")
	}

	if p := m.container.StartupProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Error("startup probe: want GET /healthz (the server listens once its start-up work is done)")
	} else if budget := p.PeriodSeconds * p.FailureThreshold; budget < 60 {
		t.Errorf("the startup probe gives up after %d s: migrations at start may take longer", budget)
	}

	keys := map[string]bool{}
	for _, c := range pod.Spec.TopologySpreadConstraints {
		keys[c.TopologyKey] = true
		if c.LabelSelector == nil {
			t.Errorf("topology spread over %s counts no pods", c.TopologyKey)
			continue
		}
		selects("topology spread over "+c.TopologyKey, c.LabelSelector.MatchLabels)
	}
	for _, k := range []string{"topology.kubernetes.io/zone", "kubernetes.io/hostname"} {
		if !keys[k] {
			t.Errorf("the pods are not spread over %s", k)
		}
	}

	// The migration Job: the Deployment's image, -mode migrate as the owner, a role for the servers.
	if n := len(m.job.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("the migration Job has %d containers, want 1", n)
	}
	mig := m.job.Spec.Template.Spec.Containers[0]
	if mig.Image != m.container.Image {
		t.Errorf("the migration Job runs %s, the Deployment %s", mig.Image, m.container.Image)
	}
	jobEnv := map[string]corev1.EnvVar{}
	known, documented := serverEnv(t), documentedEnv(t)
	for _, e := range mig.Env {
		jobEnv[e.Name] = e
		if !known[e.Name] || !documented[e.Name] {
			t.Errorf("the migration Job sets %s, no documented setting of the server", e.Name)
		}
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			if _, ok := m.secret.StringData[r.SecretKeyRef.Key]; !ok {
				t.Errorf("the migration Job reads secret key %s, which the template lacks", r.SecretKeyRef.Key)
			}
		}
	}
	if jobEnv["MODE"].Value != "migrate" || jobEnv["DB_APP_ROLE"].Value == "" {
		t.Errorf("the migration Job must run MODE=migrate granting DB_APP_ROLE")
	}
	if e := jobEnv["DATABASE_URL"]; e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Key == "DATABASE_URL" {
		t.Errorf("the migration Job must reach the database as the owner (its own Secret key), not as the servers' role")
	}
	if rp := m.job.Spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever {
		t.Errorf("the migration Job's restart policy %q", rp)
	}
	if sc := m.job.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("the migration Job must run as non-root, as the Deployment")
	}

	// Every secret setting has a slot in the Secret, and none is a ConfigMap key.
	slots := map[string]bool{}
	for _, e := range m.container.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			slots[e.Name] = true
		}
	}
	for name := range known {
		if secretSetting.MatchString(name) && !slots[name] {
			t.Errorf("secret setting %s has no Secret slot in the Deployment", name)
		}
	}
	for k := range m.config.Data {
		if secretSetting.MatchString(k) {
			t.Errorf("the ConfigMap holds %s, a secret", k)
		}
	}

	// The connection budget: GOMAXPROCS is the CPU limit (rounded up), the pool max(4, GOMAXPROCS);
	// the most pods (the HPA's maximum plus the rolling update's surge) fit PostgreSQL's default.
	cpuLimit := m.container.Resources.Limits.Cpu()
	if cpuLimit.IsZero() {
		t.Fatal("no CPU limit: GOMAXPROCS, and so the pool and the hashers, would follow the node's cores")
	}
	procs := int(math.Ceil(float64(cpuLimit.MilliValue()) / 1000))
	conns, err := strconv.Atoi(m.config.Data["DB_MAX_CONNS"])
	if err != nil {
		t.Fatalf("DB_MAX_CONNS %q: %v", m.config.Data["DB_MAX_CONNS"], err)
	}
	if want := max(4, procs); conns != want {
		t.Errorf("DB_MAX_CONNS %d, want max(4, GOMAXPROCS %d) = %d", conns, procs, want)
	}
	surge := m.deploy.Spec.Strategy.RollingUpdate.MaxSurge.IntValue()
	pods := int(m.hpa.Spec.MaxReplicas) + surge
	checkBudget(t, pods, conns)
	memReq, memLim := m.container.Resources.Requests.Memory(), m.container.Resources.Limits.Memory()
	if memLim.IsZero() || memReq.Cmp(*memLim) != 0 {
		t.Errorf("memory request %v and limit %v: want them equal (GOMEMLIMIT is 80%% of the limit, which the pod must have)", memReq, memLim)
	}
	for _, e := range m.container.Env {
		if e.Name == "GOMEMLIMIT" || e.Name == "GOMAXPROCS" {
			t.Errorf("%s is set by hand: it follows the container's limits unless set", e.Name)
		}
	}
}

// kustomization is the part of kustomize's Kustomization the overlays use; decoding into it
// strictly refuses any other field (a misspelt one among them).
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Namespace  string   `json:"namespace,omitempty"`
	Resources  []string `json:"resources"`
	Images     []struct {
		Name    string `json:"name"`
		NewName string `json:"newName,omitempty"`
		NewTag  string `json:"newTag,omitempty"`
		Digest  string `json:"digest,omitempty"`
	} `json:"images,omitempty"`
	Patches []struct {
		Path string `json:"path"`
	} `json:"patches,omitempty"`
}

// object is one rendered manifest.
type object struct {
	kind, name string
	raw        []byte // JSON
}

// typed is each kind's Go type, for strategic merge patches and strict decoding.
var typed = map[string]func() any{
	"Deployment": func() any { return &appsv1.Deployment{} }, "Service": func() any { return &corev1.Service{} },
	"ConfigMap": func() any { return &corev1.ConfigMap{} }, "PodDisruptionBudget": func() any { return &policyv1.PodDisruptionBudget{} },
	"HorizontalPodAutoscaler": func() any { return &autoscalingv2.HorizontalPodAutoscaler{} }, "Job": func() any { return &batchv1.Job{} },
	"NetworkPolicy": func() any { return &networkingv1.NetworkPolicy{} },
}

// render builds the kustomization in dir as `kubectl apply -k` would for what it uses: resources
// (files, or folders with their own kustomization), strategic merge patches, namespace and images.
func render(t *testing.T, dir string) []object {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k kustomization
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatalf("%s/kustomization.yaml: %v", dir, err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Fatalf("%s/kustomization.yaml: %s %s", dir, k.APIVersion, k.Kind)
	}
	var objs []object
	for _, r := range k.Resources {
		path := filepath.Join(dir, r)
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			objs = append(objs, render(t, path)...)
			continue
		}
		objs = append(objs, readObject(t, path))
	}
	for _, p := range k.Patches {
		patch := readObject(t, filepath.Join(dir, p.Path))
		found := false
		for i, o := range objs {
			if o.kind == patch.kind && o.name == patch.name {
				merged, err := strategicpatch.StrategicMergePatch(o.raw, patch.raw, typed[o.kind]())
				if err != nil {
					t.Fatalf("%s: patching %s/%s: %v", dir, o.kind, o.name, err)
				}
				objs[i].raw, found = merged, true
			}
		}
		if !found {
			t.Errorf("%s: patch %s targets %s/%s, which the resources lack", dir, p.Path, patch.kind, patch.name)
		}
	}
	for i := range objs {
		var o map[string]any
		if err := json.Unmarshal(objs[i].raw, &o); err != nil {
			t.Fatal(err)
		}
		if k.Namespace != "" {
			o["metadata"].(map[string]any)["namespace"] = k.Namespace
		}
		setImages(o, k)
		objs[i].raw, _ = json.Marshal(o)
	}
	return objs
}

// setImages rewrites the containers' images named in k.Images.
func setImages(o map[string]any, k kustomization) {
	spec, _ := o["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	podSpec, _ := tmpl["spec"].(map[string]any)
	containers, _ := podSpec["containers"].([]any)
	inits, _ := podSpec["initContainers"].([]any)
	for _, c := range append(containers, inits...) {
		c := c.(map[string]any)
		for _, img := range k.Images {
			if c["image"] != img.Name {
				continue
			}
			ref := img.Name
			if img.NewName != "" {
				ref = img.NewName
			}
			switch {
			case img.Digest != "":
				ref += "@" + img.Digest
			case img.NewTag != "":
				ref += ":" + img.NewTag
			}
			c["image"] = ref
		}
	}
}

func readObject(t *testing.T, path string) object {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var meta struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(js, &meta); err != nil || typed[meta.Kind] == nil {
		t.Fatalf("%s: kind %q (%v)", path, meta.Kind, err)
	}
	return object{kind: meta.Kind, name: meta.Metadata.Name, raw: js}
}

// TestKustomize_OverlaysRender: the base and each overlay render, every rendered object decodes
// strictly into its type, each overlay has a namespace of its own, the dev overlay stays small,
// and prod pins the image by digest (a tag can move under a running Deployment).
func TestKustomize_OverlaysRender(t *testing.T) {
	t.Parallel()
	base := render(t, "k8s/base")
	want := map[string]bool{}
	for _, o := range base {
		want[o.kind+"/"+o.name] = true
	}
	for _, overlay := range []string{"dev", "prod"} {
		objs := render(t, "k8s/overlays/"+overlay)
		if len(objs) != len(base) {
			t.Errorf("%s renders %d objects, the base %d", overlay, len(objs), len(base))
		}
		for _, o := range objs {
			if !want[o.kind+"/"+o.name] {
				t.Errorf("%s renders %s/%s, which the base lacks", overlay, o.kind, o.name)
			}
			v := typed[o.kind]()
			dec := json.NewDecoder(bytes.NewReader(o.raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(v); err != nil {
				t.Errorf("%s: %s/%s: %v", overlay, o.kind, o.name, err)
				continue
			}
			var ns string
			var images []string
			switch x := v.(type) {
			case *appsv1.Deployment:
				ns = x.Namespace
				for _, c := range append(x.Spec.Template.Spec.Containers, x.Spec.Template.Spec.InitContainers...) {
					images = append(images, c.Image)
				}
				if x.Spec.Replicas != nil {
					t.Errorf("%s: the Deployment sets replicas %d beside the HPA: every apply resets the HPA's count", overlay, *x.Spec.Replicas)
				}
			case *batchv1.Job:
				ns = x.Namespace
				for _, c := range x.Spec.Template.Spec.Containers {
					images = append(images, c.Image)
				}
			case *autoscalingv2.HorizontalPodAutoscaler:
				ns = x.Namespace
				if overlay == "dev" && (x.Spec.MinReplicas == nil || *x.Spec.MinReplicas != 1) {
					t.Errorf("dev's HPA keeps %v replicas at least, want 1", x.Spec.MinReplicas)
				}
				if overlay == "prod" && (x.Spec.MinReplicas == nil || *x.Spec.MinReplicas < 3) {
					t.Error("prod's HPA keeps fewer than 3 replicas")
				}
			default:
				raw := map[string]any{}
				_ = json.Unmarshal(o.raw, &raw)
				ns, _ = raw["metadata"].(map[string]any)["namespace"].(string)
			}
			if ns == "" {
				t.Errorf("%s: %s/%s has no namespace", overlay, o.kind, o.name)
			}
			for _, img := range images {
				if overlay == "prod" && !regexp.MustCompile(`@sha256:[0-9a-f]{64}$`).MatchString(img) {
					t.Errorf("prod: %s/%s runs %s, not pinned by digest", o.kind, o.name, img)
				}
				if !strings.Contains(img, "/") {
					t.Errorf("%s: %s/%s runs %s, no registry's image", overlay, o.kind, o.name, img)
				}
			}
		}
	}
}
