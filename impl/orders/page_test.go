package orders

import (
	"errors"
	"testing"
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
		var rf *Refusal
		if !errors.As(err, &rf) || !errors.Is(err, ErrInvalidInput) || rf.Field != tc.field {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestPageOf_TotalPages(t *testing.T) {
	for _, tc := range []struct {
		total int64
		size  int
		want  int64
	}{{0, 20, 0}, {1, 20, 1}, {20, 20, 1}, {21, 20, 2}, {1_000_000, 20, 50_000}} {
		if got := (PageOf[Order]{TotalElements: tc.total, Size: tc.size}).TotalPages(); got != tc.want {
			t.Errorf("%d/%d: %d pages, want %d", tc.total, tc.size, got, tc.want)
		}
	}
}
