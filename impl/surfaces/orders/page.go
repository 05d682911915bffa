package orders

import (
	"strings"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// Page bounds: size defaults to DefaultPageSize and may not exceed MaxPageSize; a page may start
// at most MaxOffset rows into its list (page × size ≤ MaxOffset), so the rows a query skips stay
// bounded whatever the list's size: a page deeper than that is refused, not read. MaxPage, the
// largest page number, is MaxOffset (a page of one row). The spec states the same limits.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
	MaxOffset       = 10000
	MaxPage         = MaxOffset
)

// SortField is a column a list may be sorted by.
type SortField string

// The sortable fields, an allow-list mapped to fixed SQL.
const (
	SortID        SortField = "id"
	SortPrice     SortField = "price"
	SortCreatedAt SortField = "createdAt"
)

// PageRequest is a validated page of a list.
type PageRequest struct {
	Number int
	Size   int
	Sort   SortField
	Desc   bool
}

// ParsePage validates Spring-style page, size and sort ("field" or "field,asc|desc"); nil means
// the default (page 0, size 20, id ascending). Every invalid one is reported (JoinInvalid), not
// only the first, so a client fixes its request in one round.
func ParsePage(page, size *int32, sort *string) (PageRequest, error) {
	p := PageRequest{Number: 0, Size: DefaultPageSize, Sort: SortID}
	var pageErr, sizeErr, sortErr error
	if page != nil {
		if err := bounded("page", int64(*page), 0, MaxPage); err != nil {
			pageErr = err
		} else {
			p.Number = int(*page)
		}
	}
	if size != nil {
		if err := bounded("size", int64(*size), 1, MaxPageSize); err != nil {
			sizeErr = err
		} else {
			p.Size = int(*size)
		}
	}
	if sort != nil && *sort != "" {
		sortErr = p.parseSort(*sort)
	}
	if pageErr == nil && sizeErr == nil && p.Number*p.Size > MaxOffset {
		// Too deep for this size: the limit is the deepest page of this size.
		pageErr = bounded("page", int64(p.Number), 0, int64(MaxOffset/p.Size))
	}
	if pageErr == nil && sizeErr == nil && sortErr == nil {
		return p, nil // the common case: no slice of problems to build
	}
	return p, JoinInvalid(pageErr, sizeErr, sortErr)
}

// parseSort sets the sort of p from "field" or "field,asc|desc".
func (p *PageRequest) parseSort(sort string) error {
	field, dir, hasDir := strings.Cut(sort, ",")
	switch SortField(field) {
	case SortID, SortPrice, SortCreatedAt:
		p.Sort = SortField(field)
	default:
		return InvalidInput(invalid.OneOf("", "sort", SortValues()))
	}
	switch {
	case !hasDir || dir == "asc":
	case dir == "desc":
		p.Desc = true
	default:
		return InvalidInput(invalid.OneOf("", "sort", SortValues()))
	}
	return nil
}

// SortValues lists every sort a list takes, as the spec's OrderSort enum does.
func SortValues() []string {
	var out []string
	for _, f := range []SortField{SortID, SortPrice, SortCreatedAt} {
		out = append(out, string(f), string(f)+",asc", string(f)+",desc")
	}
	return out
}

// bounded refuses n outside [lowest, highest] as too_small or too_large, with the bound broken.
func bounded(field string, n, lowest, highest int64) error {
	switch {
	case n < lowest:
		return InvalidInput(invalid.Bound("", field, invalid.TooSmall, invalid.Int(lowest)))
	case n > highest:
		return InvalidInput(invalid.Bound("", field, invalid.TooLarge, invalid.Int(highest)))
	}
	return nil
}

// PageOf is one page of a list with its exact total.
type PageOf[T any] struct {
	Items         []T
	Number, Size  int
	TotalElements int64
}

// TotalPages is ceil(TotalElements / Size).
func (p PageOf[T]) TotalPages() int64 {
	if p.Size <= 0 {
		return 0
	}
	return (p.TotalElements + int64(p.Size) - 1) / int64(p.Size)
}
