package page

import (
	"net/url"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/kit/invalid"
)

// TestBounds_MatchTheSharedSpec: the bounds and defaults Parse keeps are those of the Page and
// Size parameters of api/shared/components.yaml, which every list refers to; a bound changed on
// one side only fails here.
func TestBounds_MatchTheSharedSpec(t *testing.T) {
	body, err := api.Sources.ReadFile("shared/components.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Parameters map[string]struct {
				Name, In string
				Schema   struct{ Minimum, Maximum, Default *int }
			}
		}
	}
	if err := yaml.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	for component, want := range map[string]struct {
		name          string
		min, max, def int
	}{
		"Page": {NumberParam, 0, MaxNumber, 0},
		"Size": {SizeParam, 1, MaxSize, DefaultSize},
	} {
		p, ok := doc.Components.Parameters[component]
		if !ok {
			t.Errorf("api/shared/components.yaml has no parameter %s", component)
			continue
		}
		s := p.Schema
		if p.Name != want.name || p.In != "query" || s.Minimum == nil || s.Maximum == nil || s.Default == nil ||
			*s.Minimum != want.min || *s.Maximum != want.max || *s.Default != want.def {
			t.Errorf("parameter %s: %s in %s, minimum %v, maximum %v, default %v; package page: %s in query, [%d, %d], default %d",
				component, p.Name, p.In, deref(s.Minimum), deref(s.Maximum), deref(s.Default), want.name, want.min, want.max, want.def)
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return "none"
	}
	return *p
}

func i32(v int32) *int32 { return &v }

// TestParse_DefaultsAndBounds: nothing sent is page 0 of DefaultSize; each parameter out of its
// bounds is refused naming it, in the query, and both at once when both are.
func TestParse_DefaultsAndBounds(t *testing.T) {
	if r, err := Parse(nil, nil); err != nil || r != (Request{Number: 0, Size: DefaultSize}) {
		t.Fatalf("defaults: %+v %v", r, err)
	}
	if r, err := Parse(i32(3), i32(MaxSize)); err != nil || r != (Request{Number: 3, Size: MaxSize}) || r.Offset() != 300 {
		t.Fatalf("explicit: %+v %v", r, err)
	}
	for name, tc := range map[string]struct {
		number, size *int32
		want         []string // field code limit
	}{
		"negative page": {number: i32(-1), want: []string{"page too_small 0"}},
		"huge page":     {number: i32(MaxNumber + 1), want: []string{"page too_large 10000"}},
		"zero size":     {size: i32(0), want: []string{"size too_small 1"}},
		"size over cap": {size: i32(MaxSize + 1), want: []string{"size too_large 100"}},
		"both":          {number: i32(-1), size: i32(0), want: []string{"page too_small 0", "size too_small 1"}},
	} {
		_, err := Parse(tc.number, tc.size)
		if got := summary(invalid.ProblemsOf(err)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

// TestParse_OffsetBound: a page may start at most MaxOffset rows into its list, whatever its
// size; a deeper one is refused as too_large with the deepest page of that size as the limit, so
// a list asked for page 9999 of 100 costs no query.
func TestParse_OffsetBound(t *testing.T) {
	for _, tc := range []struct {
		number, size int32
		limit        string // "" when accepted
	}{
		{9999, 100, "100"},
		{101, 100, "100"},
		{100, 100, ""},
		{500, 20, ""},
		{501, 20, "500"},
		{MaxNumber, 1, ""},
		{3334, 3, "3333"},
	} {
		_, err := Parse(i32(tc.number), i32(tc.size))
		got := summary(invalid.ProblemsOf(err))
		switch {
		case tc.limit == "" && err != nil:
			t.Errorf("page %d of size %d refused: %v", tc.number, tc.size, err)
		case tc.limit != "" && !slices.Equal(got, []string{"page too_large " + tc.limit}):
			t.Errorf("page %d of size %d: %v, want page too_large with limit %s", tc.number, tc.size, got, tc.limit)
		}
	}
}

// TestProblems_WhatTheSpecCannotSay: on a query the validator refused, the parameters sent twice
// (the list's own too) and a page too deep for its size, and nothing about what is not one
// integer (the validator names it).
func TestProblems_WhatTheSpecCannotSay(t *testing.T) {
	for q, want := range map[string][]string{
		"page=600&size=20":           {"page too_large 500"},
		"page=1&page=2&size=100":     {"page repeated "},
		"sort=id&sort=price&page=1":  {"sort repeated "},
		"page=x&size=20":             nil,
		"page=200&size=100&size=100": {"size repeated "},
		"page=101&size=100&foo=1":    {"page too_large 100"},
	} {
		v, err := url.ParseQuery(q)
		if err != nil {
			t.Fatal(err)
		}
		if got := summary(Problems(v, "sort")); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
}

// summary writes each problem as "field code limit", checking it is placed in the query.
func summary(ds []invalid.Detail) []string {
	var out []string
	for _, d := range ds {
		s := d.Field + " " + string(d.Code) + " " + string(d.Limit)
		if d.In != invalid.Query {
			s += " (in " + string(d.In) + ")"
		}
		out = append(out, s)
	}
	return out
}

func TestOf_TotalPages(t *testing.T) {
	for _, tc := range []struct {
		total int64
		size  int
		want  int64
	}{{0, 20, 0}, {1, 20, 1}, {20, 20, 1}, {21, 20, 2}, {1_000_000, 20, 50_000}} {
		if got := (Of[int]{TotalElements: tc.total, Size: tc.size}).TotalPages(); got != tc.want {
			t.Errorf("%d/%d: %d pages, want %d", tc.total, tc.size, got, tc.want)
		}
	}
}
