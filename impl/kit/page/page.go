// Package page is the house's one pagination of a list, as api/shared/components.yaml states it
// for every surface: the query parameters `page` (from 0) and `size` (default 20, at most 100),
// and the `PageMeta` of the answer. A page may start at most MaxOffset rows into its list
// (page × size ≤ MaxOffset), so the rows a query skips stay bounded whatever the list's size: a
// deeper page is refused (too_large, its limit the deepest page of the size asked for), never
// read. The spec can bound each parameter but not their product, so that rule lives here once,
// for the handler (Parse) and for the spec validator's refusals (Problems), and orders and every
// scaffolded list take it from here rather than writing it again. It knows no HTTP.
package page

import (
	"net/url"
	"strconv"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// The bounds of api/shared/components.yaml's Page and Size parameters (page_test.go ties them to
// the spec): the default size, the largest size, and the deepest row a page may start at. MaxNumber,
// the largest page number the spec lets through, is MaxOffset (a page of one row).
const (
	DefaultSize = 20
	MaxSize     = 100
	MaxOffset   = 10000
	MaxNumber   = MaxOffset
)

// The parameters' names, as the shared spec declares them (in the query).
const (
	NumberParam = "page"
	SizeParam   = "size"
)

// Request is a validated page of a list: its zero-based number and its size.
type Request struct {
	Number int
	Size   int
}

// Offset is the number of rows before the page: at most MaxOffset.
func (r Request) Offset() int { return r.Number * r.Size }

// Parse validates a page's number and size as sent (nil: not sent, the default: page 0 of
// DefaultSize). Every problem is reported at once, as invalid.Problems placed in the query, so a
// client fixes its request in one round: a number or size out of its bounds, and otherwise a page
// starting deeper than MaxOffset rows (page, too_large, the deepest page of that size as limit).
func Parse(number, size *int32) (Request, error) {
	r := Request{Number: 0, Size: DefaultSize}
	var out invalid.Problems
	if number != nil {
		if d, bad := bounded(NumberParam, int64(*number), 0, MaxNumber); bad {
			out = append(out, d)
		} else {
			r.Number = int(*number)
		}
	}
	if size != nil {
		if d, bad := bounded(SizeParam, int64(*size), 1, MaxSize); bad {
			out = append(out, d)
		} else {
			r.Size = int(*size)
		}
	}
	if len(out) == 0 && r.Offset() > MaxOffset {
		// Too deep for this size: the limit is the deepest page of this size.
		d, _ := bounded(NumberParam, int64(r.Number), 0, int64(MaxOffset/r.Size))
		out = append(out, d)
	}
	if len(out) == 0 {
		return r, nil // the common case: no problems to build
	}
	return r, out
}

// Problems names, for a list request the spec validator refused for another reason, what the
// spec cannot state about the page parameters of its query q, so that one answer lists every
// problem: a parameter sent more than once (page, size, and the list's own others, such as a
// sort), and a page deeper than MaxOffset rows for its size. A page or size that is not one
// integer is the validator's to name. A surface gives it to the validator as the field check of
// each list operation (router.Surface.Also).
func Problems(q url.Values, others ...string) []invalid.Detail {
	var out []invalid.Detail
	var number, size *int32
	for _, name := range append([]string{NumberParam, SizeParam}, others...) {
		vals := q[name]
		if len(vals) > 1 {
			out = append(out, invalid.New(invalid.Query, name, invalid.Repeated))
		}
		if len(vals) != 1 || (name != NumberParam && name != SizeParam) {
			continue
		}
		n, err := strconv.ParseInt(vals[0], 10, 32)
		if err != nil {
			continue
		}
		v := int32(n)
		if name == NumberParam {
			number = &v
		} else {
			size = &v
		}
	}
	_, err := Parse(number, size)
	return append(out, invalid.ProblemsOf(err)...)
}

// bounded is the problem of n outside [lowest, highest] (too_small or too_large, with the bound
// broken), and whether there is one.
func bounded(field string, n, lowest, highest int64) (invalid.Detail, bool) {
	switch {
	case n < lowest:
		return invalid.Bound(invalid.Query, field, invalid.TooSmall, invalid.Int(lowest)), true
	case n > highest:
		return invalid.Bound(invalid.Query, field, invalid.TooLarge, invalid.Int(highest)), true
	}
	return invalid.Detail{}, false
}

// Of is one page of a list with the exact total of the whole list: what the shared PageMeta
// describes, with the page's items.
type Of[T any] struct {
	Items         []T
	Number, Size  int
	TotalElements int64
}

// TotalPages is ceil(TotalElements / Size).
func (p Of[T]) TotalPages() int64 {
	if p.Size <= 0 {
		return 0
	}
	return (p.TotalElements + int64(p.Size) - 1) / int64(p.Size)
}
