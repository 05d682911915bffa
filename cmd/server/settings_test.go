package main

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var updateConfigDocs = flag.Bool("update-config-docs", false, "rewrite docs/configuration.md's settings table from the settings table")

const (
	docsBegin = "<!-- settings:begin -->\n"
	docsEnd   = "<!-- settings:end -->"
)

// TestConfigDocs_AreTheTable: docs/configuration.md's table is the settings table rendered, so a
// setting added, renamed or re-defaulted in code cannot leave the docs behind.
func TestConfigDocs_AreTheTable(t *testing.T) {
	const path = "../../docs/configuration.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin, end := strings.Index(doc, docsBegin), strings.Index(doc, docsEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no %q ... %q section", path, docsBegin, docsEnd)
	}
	want := settingsDocs(settings(&Config{}))
	got := doc[begin+len(docsBegin) : end]
	if got == want {
		return
	}
	if *updateConfigDocs {
		if err := os.WriteFile(path, []byte(doc[:begin+len(docsBegin)]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(gl), len(wl)) {
		if gl[i] != wl[i] {
			t.Fatalf("docs/configuration.md's table differs from cmd/server/settings.go at row %d:\n docs: %s\n code: %s\nrun: go test ./cmd/server -run TestConfigDocs -update-config-docs", i, gl[i], wl[i])
		}
	}
	t.Fatalf("docs/configuration.md's table has %d lines, the settings table %d: run go test ./cmd/server -run TestConfigDocs -update-config-docs", len(gl), len(wl))
}

// TestSettings_EveryErrorNamesItsVariable: a value out of any row's bounds, from the environment
// or a flag, stops the start with an error that names the variable (ORDERS_TOKEN_TTL=0s used to
// say only "orders token TTL must be positive").
func TestSettings_EveryErrorNamesItsVariable(t *testing.T) {
	bad := func(s *setting) string {
		switch s.value.(type) {
		case value[int], value[int64]:
			return "-1"
		case value[time.Duration]:
			return "-1s"
		case value[string]:
			return "no such value/at all"
		}
		return ""
	}
	checked := 0
	for _, s := range settings(&Config{}) {
		if s.check == nil || !s.bounded {
			continue
		}
		v := bad(s)
		if v == "" {
			t.Fatalf("%s: no bad value for its type", s.env)
		}
		checked++
		t.Run(s.env, func(t *testing.T) {
			t.Setenv(s.env, v)
			_, err := LoadConfig(nil)
			if err == nil || !strings.Contains(err.Error(), s.env+"=") {
				t.Fatalf("%s=%s: error %v does not name it", s.env, v, err)
			}
			os.Unsetenv(s.env)
			if _, err := LoadConfig([]string{"-" + s.flag, v}); err == nil || !strings.Contains(err.Error(), s.env+"=") {
				t.Fatalf("-%s %s: error %v does not name %s", s.flag, v, err, s.env)
			}
		})
	}
	if checked < 15 {
		t.Fatalf("only %d bounded settings: the table lost its checks", checked)
	}
	// The case the issue found: zero for a lifetime.
	if _, err := LoadConfig([]string{"-orders-token-ttl", "0s"}); err == nil || !strings.Contains(err.Error(), "ORDERS_TOKEN_TTL=0s") {
		t.Fatalf("ORDERS_TOKEN_TTL=0s: error %v", err)
	}
}

// TestSettings_OneRowEach: no flag or variable is declared twice, and every row of a flag names
// its variable in -h.
func TestSettings_OneRowEach(t *testing.T) {
	flags, envs := map[string]bool{}, map[string]bool{}
	for _, s := range settings(&Config{}) {
		if envs[s.env] || (s.flag != "" && flags[s.flag]) {
			t.Errorf("%s / -%s declared twice", s.env, s.flag)
		}
		envs[s.env], flags[s.flag] = true, true
		if s.help == "" && s.flag != "" {
			t.Errorf("%s has no help", s.env)
		}
	}
}

// TestSettings_FormerNameStillRead: a renamed setting's old variable is read while the new one is
// unset, and the new one wins.
func TestSettings_FormerNameStillRead(t *testing.T) {
	t.Setenv("ORDERS_MAX_IN_PROGRESS", "3")
	c, err := LoadConfig(nil)
	if err != nil || c.Orders.Limits.MaxHeld != 3 {
		t.Fatalf("ORDERS_MAX_IN_PROGRESS=3: MaxHeld %d, %v", c.Orders.Limits.MaxHeld, err)
	}
	t.Setenv("ORDERS_MAX_HELD", "4")
	if c, err = LoadConfig(nil); err != nil || c.Orders.Limits.MaxHeld != 4 {
		t.Fatalf("ORDERS_MAX_HELD=4 beside the old name: MaxHeld %d, %v", c.Orders.Limits.MaxHeld, err)
	}
	t.Setenv("ORDERS_MAX_HELD", "")
	os.Unsetenv("ORDERS_MAX_HELD")
	t.Setenv("ORDERS_MAX_IN_PROGRESS", "x")
	if _, err = LoadConfig(nil); err == nil || !strings.Contains(err.Error(), `ORDERS_MAX_IN_PROGRESS="x"`) {
		t.Fatalf("a malformed old name: error %v, want it named", err)
	}
}
