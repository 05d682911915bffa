package orders

import (
	"strings"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/page"
)

// Page bounds: the house's one pagination (impl/kit/page, api/shared/components.yaml), named
// here for the orders code and tests that read them.
const (
	DefaultPageSize = page.DefaultSize
	MaxPageSize     = page.MaxSize
	MaxOffset       = page.MaxOffset
	MaxPage         = page.MaxNumber
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
// the default (page 0, size 20, id ascending). The page and size are the shared pagination's
// (page.Parse: its bounds and its depth rule), the sort the orders lists' own. Every invalid one
// is reported (JoinInvalid), not only the first, so a client fixes its request in one round.
func ParsePage(number, size *int32, sort *string) (PageRequest, error) {
	r, pageErr := page.Parse(number, size)
	p := PageRequest{Number: r.Number, Size: r.Size, Sort: SortID}
	var sortErr error
	if sort != nil && *sort != "" {
		sortErr = p.parseSort(*sort)
	}
	if pageErr == nil && sortErr == nil {
		return p, nil // the common case: no slice of problems to build
	}
	return p, JoinInvalid(pageErr, sortErr)
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

// PageOf is one page of a list with its exact total (the shared page.Of).
type PageOf[T any] = page.Of[T]
