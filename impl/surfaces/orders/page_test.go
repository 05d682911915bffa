package orders

import (
	"errors"
	"slices"
	"testing"

	"github.com/triadhq/triad/impl/kit/invalid"
)

func TestParsePage_DefaultsAndBounds(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	str := func(v string) *string { return &v }
	p, err := ParsePage(nil, nil, nil)
	if err != nil || p != (PageRequest{Number: 0, Size: 20, Sort: SortID}) {
		t.Fatalf("defaults: %+v %v", p, err)
	}
	p, err = ParsePage(i32(3), i32(100), str("price,desc"))
	if err != nil || p != (PageRequest{Number: 3, Size: 100, Sort: SortPrice, Desc: true}) {
		t.Fatalf("explicit: %+v %v", p, err)
	}
	p, err = ParsePage(nil, nil, str("createdAt"))
	if err != nil || p.Sort != SortCreatedAt || p.Desc {
		t.Fatalf("field only: %+v %v", p, err)
	}
	for name, tc := range map[string]struct {
		page, size *int32
		sort       *string
		field      string
	}{
		"negative page": {page: i32(-1), field: "page"},
		"huge page":     {page: i32(MaxPage + 1), field: "page"},
		"zero size":     {size: i32(0), field: "size"},
		"size over cap": {size: i32(MaxPageSize + 1), field: "size"},
		"unknown field": {sort: str("password"), field: "sort"},
		"bad direction": {sort: str("id,up"), field: "sort"},
		"sql injection": {sort: str("id; DROP TABLE orders"), field: "sort"},
	} {
		_, err := ParsePage(tc.page, tc.size, tc.sort)
		all := invalid.ProblemsOf(err)
		if len(all) != 1 || !errors.Is(err, ErrInvalidInput) || all[0].Field != tc.field {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestParsePage_EveryProblemAtOnce: a request with several bad page parameters learns about all
// of them, each naming its field, in the order page, size, sort.
func TestParsePage_EveryProblemAtOnce(t *testing.T) {
	i32 := func(v int32) *int32 { return &v }
	str := func(v string) *string { return &v }
	for name, tc := range map[string]struct {
		page, size *int32
		sort       *string
		fields     []string
	}{
		"page and size": {page: i32(-1), size: i32(0), fields: []string{"page", "size"}},
		"all three":     {page: i32(MaxPage + 1), size: i32(MaxPageSize + 1), sort: str("password"), fields: []string{"page", "size", "sort"}},
		"size and sort": {size: i32(-5), sort: str("id,up"), fields: []string{"size", "sort"}},
		"page and sort": {page: i32(-1), sort: str("price,sideways"), fields: []string{"page", "sort"}},
	} {
		_, err := ParsePage(tc.page, tc.size, tc.sort)
		all := invalid.ProblemsOf(err)
		if len(all) == 0 || !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v, want invalid.Problems of ErrInvalidInput", name, err)
			continue
		}
		var fields []string
		for _, d := range all {
			fields = append(fields, d.Field)
		}
		if !slices.Equal(fields, tc.fields) {
			t.Errorf("%s: fields %v, want %v", name, fields, tc.fields)
		}
	}
}

// TestJoinInvalid: no refusal is nil, one is itself, several are one invalid.Problems, and any
// other error wins, since it is no input problem.
func TestJoinInvalid(t *testing.T) {
	var a, b error = InvalidInput(invalid.New("", "a", invalid.Blank)), InvalidInput(invalid.New("", "b", invalid.Blank))
	other := errors.New("database down")
	if err := JoinInvalid(nil, nil); err != nil {
		t.Errorf("none: %v", err)
	}
	if err := JoinInvalid(nil, a); len(invalid.ProblemsOf(err)) != 1 || invalid.ProblemsOf(err)[0].Field != "a" {
		t.Errorf("one: %v", err)
	}
	if err := JoinInvalid(a, b); len(invalid.ProblemsOf(err)) != 2 || err.Error() != "invalid input: a: must not be blank; b: must not be blank" {
		t.Errorf("several: %v", err)
	}
	if err := JoinInvalid(a, other, b); err != other {
		t.Errorf("another error: %v", err)
	}
}
