package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// promtool runs Debian's promtool (make deps-prometheus installs it) with args in dir.
func promtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Fatal("promtool is missing: make deps-prometheus (Debian's prometheus package)")
	}
	cmd := exec.Command("promtool", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestMonitoring_RulesPassPromtool: the rules parse, and their unit tests (each fault fires its
// alert; a flood, a surface without 5xx and one without traffic fire none) pass.
func TestMonitoring_RulesPassPromtool(t *testing.T) {
	t.Parallel()
	promtool(t, "monitoring", "check", "rules", "rules.yaml")
	promtool(t, "monitoring", "test", "rules", "rules.test.yaml")
}

type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Record      string            `json:"record,omitempty"`
			Alert       string            `json:"alert,omitempty"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels,omitempty"`
			Annotations map[string]string `json:"annotations,omitempty"`
		} `json:"rules"`
	} `json:"groups"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// operatorObject is the head of a Prometheus Operator object.
type operatorObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
}

// TestMonitoring_PrometheusRuleIsTheRuleFile: the operator's PrometheusRule carries rules.yaml's
// groups unchanged, and the PodMonitor scrapes the Deployment's pods on their metrics port under
// the job the rules name.
func TestMonitoring_PrometheusRuleIsTheRuleFile(t *testing.T) {
	t.Parallel()
	var rules ruleFile
	readYAML(t, "monitoring/rules.yaml", &rules)
	var pr struct {
		operatorObject
		Spec ruleFile `json:"spec"`
	}
	readYAML(t, "k8s/monitoring/prometheusrule.yaml", &pr)
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" {
		t.Fatalf("prometheusrule.yaml is %s %s", pr.APIVersion, pr.Kind)
	}
	if !reflect.DeepEqual(pr.Spec, rules) {
		t.Fatal("the PrometheusRule's groups differ from deploy/monitoring/rules.yaml: copy rules.yaml's groups under its spec")
	}

	var pm struct {
		operatorObject
		Spec struct {
			JobLabel string `json:"jobLabel"`
			Selector struct {
				MatchLabels map[string]string `json:"matchLabels"`
			} `json:"selector"`
			PodMetricsEndpoints []struct {
				Port     string `json:"port"`
				Path     string `json:"path"`
				Interval string `json:"interval"`
			} `json:"podMetricsEndpoints"`
		} `json:"spec"`
	}
	readYAML(t, "k8s/monitoring/podmonitor.yaml", &pm)
	m := load(t)
	pod := m.deploy.Spec.Template
	if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" || len(pm.Spec.Selector.MatchLabels) == 0 {
		t.Fatalf("podmonitor.yaml: %s %s selecting %v", pm.APIVersion, pm.Kind, pm.Spec.Selector.MatchLabels)
	}
	for k, v := range pm.Spec.Selector.MatchLabels {
		if pod.Labels[k] != v {
			t.Errorf("the PodMonitor selects %s=%s, which the Deployment's pods lack", k, v)
		}
	}
	if job := pod.Labels[pm.Spec.JobLabel]; job != "triad" {
		t.Errorf("the PodMonitor's job is the pods' %q label, %q: the rules expect job=\"triad\"", pm.Spec.JobLabel, job)
	}
	ports := map[string]int32{}
	for _, p := range m.container.Ports {
		ports[p.Name] = p.ContainerPort
	}
	metricsAddr := ""
	for _, e := range m.container.Env {
		if e.Name == "METRICS_ADDR" {
			metricsAddr = e.Value
		}
	}
	for _, ep := range pm.Spec.PodMetricsEndpoints {
		port, ok := ports[ep.Port]
		if !ok || ep.Path != "/metrics" || !strings.HasSuffix(metricsAddr, fmt.Sprintf(":%d", port)) {
			t.Errorf("the PodMonitor scrapes port %q (%d) path %s; the server serves /metrics on METRICS_ADDR %q", ep.Port, port, ep.Path, metricsAddr)
		}
	}
	var kust struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
	}
	readYAML(t, "k8s/monitoring/kustomization.yaml", &kust)
	if !slices.Equal(kust.Resources, []string{"podmonitor.yaml", "prometheusrule.yaml"}) {
		t.Errorf("deploy/k8s/monitoring's kustomization lists %v", kust.Resources)
	}
}

// headingAnchors are the anchors GitHub gives the headings of a Markdown file.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	drop := regexp.MustCompile("[^a-z0-9 _-]")
	for _, l := range strings.Split(string(raw), "\n") {
		if h, ok := strings.CutPrefix(l, "#"); ok {
			h = strings.TrimSpace(strings.TrimLeft(h, "#"))
			anchors[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
		}
	}
	return anchors
}

// TestMonitoring_EveryAlertHasARunbook: each alert says how urgent it is (page, ticket) and links
// to a section of docs/operations.md that exists.
func TestMonitoring_EveryAlertHasARunbook(t *testing.T) {
	t.Parallel()
	var rules ruleFile
	readYAML(t, "monitoring/rules.yaml", &rules)
	anchors := headingAnchors(t, "../docs/operations.md")
	const prefix = "https://github.com/triadhq/triad/blob/main/docs/operations.md#"
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			if s := r.Labels["severity"]; s != "page" && s != "ticket" {
				t.Errorf("%s: severity %q, want page or ticket", r.Alert, s)
			}
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], prefix)
			if !ok || !anchors[anchor] {
				t.Errorf("%s: runbook_url %q is no section of docs/operations.md", r.Alert, r.Annotations["runbook_url"])
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s has no summary", r.Alert)
			}
		}
	}
	if alerts == 0 {
		t.Fatal("no alerts in rules.yaml")
	}
}

// dashboardQueries are a Grafana dashboard's PromQL expressions (its panels' targets) and the
// metrics its template variables read (label_values(metric..., label)).
func dashboardQueries(t *testing.T, path string) (exprs, varMetrics []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Type  string `json:"type"`
				Query any    `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: no uid or no panels", path)
	}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %q queries nothing", path, p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	labelValues := regexp.MustCompile(`^label_values\(([a-zA-Z_:][a-zA-Z0-9_:]*)`)
	for _, v := range d.Templating.List {
		q, _ := v.Query.(map[string]any)
		if s, _ := q["query"].(string); v.Type == "query" {
			m := labelValues.FindStringSubmatch(s)
			if m == nil {
				t.Errorf("%s: variable query %q is not label_values(metric, label)", path, s)
				continue
			}
			varMetrics = append(varMetrics, m[1])
		}
	}
	return exprs, varMetrics
}

// grafanaVars are the dashboards' variables as a value PromQL parses in their place.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$surface", ".*", "$operation", ".*")

var (
	promqlStrings = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promqlBraces  = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]`)
	promqlGroups  = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promqlTokens  = regexp.MustCompile(`[0-9][0-9.]*(?:e[-+]?[0-9]+)?(?:ms|[smhdwy])?|[a-zA-Z_:][a-zA-Z0-9_:]*\s*\(?`)
	promqlWords   = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true,
		"group_right": true, "bool": true, "and": true, "or": true, "unless": true, "offset": true, "inf": true, "nan": true}
)

// metricNames are the metrics a PromQL expression selects (its functions, keywords and labels aside).
func metricNames(expr string) []string {
	s := promqlStrings.ReplaceAllString(expr, `""`)
	s = promqlGroups.ReplaceAllString(promqlBraces.ReplaceAllString(s, " "), " ")
	var out []string
	for _, tok := range promqlTokens.FindAllString(s, -1) {
		word := strings.TrimSpace(tok)
		if word[0] >= '0' && word[0] <= '9' || strings.HasSuffix(word, "(") || promqlWords[strings.ToLower(word)] {
			continue
		}
		out = append(out, word)
	}
	return out
}

// exportedMetrics are the metrics the server exports (docs/operations.md's triad_* rows, which
// TestServer_Metrics holds to the server's scrape), the rules record, and the shipped exporters
// export (monitoring/exporters.yaml).
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	known := map[string]bool{}
	raw, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?m)^\\| `(triad_[a-z0-9_]+)` \\|").FindAllStringSubmatch(string(raw), -1) {
		known[m[1]] = true
	}
	var rules ruleFile
	readYAML(t, "monitoring/rules.yaml", &rules)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				known[r.Record] = true
			}
		}
	}
	var exporters map[string][]string
	readYAML(t, "monitoring/exporters.yaml", &exporters)
	for _, names := range exporters {
		for _, n := range names {
			known[n] = true
		}
	}
	return known
}

// TestMonitoring_DashboardsParseAndNameExportedMetrics: every query of every shipped dashboard
// parses as PromQL (promtool checks each as a recording rule, its Grafana variables filled in),
// and names only metrics the server, the rules or a shipped exporter export; and so do the rules.
func TestMonitoring_DashboardsParseAndNameExportedMetrics(t *testing.T) {
	t.Parallel()
	known := exportedMetrics(t)
	isKnown := func(name string) bool {
		for _, suffix := range []string{"", "_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && known[base] {
				return true
			}
		}
		return name == "ALERTS"
	}
	files, err := filepath.Glob("monitoring/dashboards/*.json")
	if err != nil || len(files) < 3 {
		t.Fatalf("dashboards %v (%v): want the RED, database and HA ones", files, err)
	}
	var check strings.Builder
	check.WriteString("groups:\n  - name: dashboards\n    rules:\n")
	n := 0
	for _, f := range files {
		exprs, vars := dashboardQueries(t, f)
		for _, e := range exprs {
			filled := grafanaVars.Replace(e)
			if strings.Contains(filled, "$") {
				t.Errorf("%s: %q uses a variable the dashboards do not define", f, e)
			}
			js, _ := json.Marshal(filled)
			fmt.Fprintf(&check, "      - record: dashboard:query%d\n        expr: %s\n", n, js)
			n++
			for _, m := range metricNames(filled) {
				if !isKnown(m) {
					t.Errorf("%s: %q names %s, which neither the server, the rules nor a shipped exporter exports", f, e, m)
				}
			}
		}
		for _, m := range vars {
			if !isKnown(m) {
				t.Errorf("%s: a variable reads %s, which nothing exports", f, m)
			}
		}
	}
	var rules ruleFile
	readYAML(t, "monitoring/rules.yaml", &rules)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			for _, m := range metricNames(r.Expr) {
				if !isKnown(m) {
					t.Errorf("rule %s%s names %s, which nothing exports", r.Record, r.Alert, m)
				}
			}
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dashboards.rules.yaml"), []byte(check.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	promtool(t, dir, "check", "rules", "dashboards.rules.yaml")
}

func TestMetricNames(t *testing.T) {
	got := metricNames(`histogram_quantile(0.99, sum by (le, operation) (rate(triad_x_bucket{surface=~"a|b",le="1"}[5m]))) / clamp_min(up, 1e-12) - on (scope) group_right patroni_y > 3 * 1024 and pg_up offset 5m`)
	want := []string{"triad_x_bucket", "up", "patroni_y", "pg_up"}
	if !slices.Equal(got, want) {
		t.Fatalf("metricNames = %v, want %v", got, want)
	}
}
