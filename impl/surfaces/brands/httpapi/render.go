package httpapi

import (
	"context"
	"strconv"
	"sync/atomic"
	"unicode/utf8"

	"github.com/triadhq/triad/impl/surfaces/brands"
)

// The Brand object of api/brands.yaml is written here and nowhere else: appendBrand renders every
// brand the API answers with (lists, one brand, a profile's subscriptions). Rendering by appending
// to one buffer avoids encoding/json's reflection: it is what lets a list cache miss keep pace
// with a plain scan-and-encode handler.

// renderList writes brands as the JSON array of Brand objects.
func renderList(bs []brands.Brand) []byte {
	buf := make([]byte, 0, 64+len(bs)*384)
	buf = append(buf, '[')
	for i := range bs {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendBrand(buf, &bs[i])
	}
	return append(buf, ']')
}

// renderBrand writes one Brand object.
func renderBrand(b *brands.Brand) []byte { return appendBrand(make([]byte, 0, 512), b) }

// appendBrand appends one Brand object, in the field order of api/brands.yaml.
func appendBrand(buf []byte, b *brands.Brand) []byte {
	buf = append(buf, `{"_id":`...)
	buf = appendString(buf, b.ID)
	buf = append(buf, `,"name":`...)
	buf = appendString(buf, b.Name)
	buf = append(buf, `,"description":`...)
	buf = appendString(buf, b.Description)
	buf = append(buf, `,"url":`...)
	buf = appendString(buf, b.URL)
	buf = append(buf, `,"featuredImage":`...)
	buf = appendString(buf, b.FeaturedImage)
	buf = append(buf, `,"availability":`...)
	buf = strconv.AppendBool(buf, b.Availability)
	buf = append(buf, `,"isFeatured":`...)
	buf = strconv.AppendBool(buf, b.IsFeatured)
	buf = append(buf, `,"products":`...)
	if len(b.Products) == 0 {
		buf = append(buf, "[]"...)
	} else {
		buf = append(buf, b.Products...) // jsonb text from PostgreSQL: valid JSON already
	}
	buf = append(buf, `,"subscriberCount":`...)
	buf = strconv.AppendInt(buf, int64(b.SubscriberCount), 10)
	return append(buf, '}')
}

// timeLayout is ISO 8601 in UTC with milliseconds, like JavaScript's toISOString.
const timeLayout = "2006-01-02T15:04:05.000Z"

// renderMe writes a profile with the token the caller presented.
func renderMe(tok string, p *brands.Profile) []byte {
	buf := make([]byte, 0, 256+len(p.Subscriptions)*384)
	buf = append(buf, `{"_id":`...)
	buf = appendString(buf, p.ID)
	buf = append(buf, `,"token":`...)
	buf = appendString(buf, tok)
	buf = append(buf, `,"email":`...)
	buf = appendString(buf, p.Email)
	buf = append(buf, `,"name":`...)
	buf = appendString(buf, p.Name)
	buf = append(buf, `,"isAdmin":`...)
	buf = strconv.AppendBool(buf, p.IsAdmin)
	buf = append(buf, `,"subscriptions":[`...)
	for i := range p.Subscriptions {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendBrand(buf, &p.Subscriptions[i])
	}
	buf = append(buf, `],"created_at":`...)
	buf = appendString(buf, p.CreatedAt.UTC().Format(timeLayout))
	return append(buf, '}')
}

// listCache holds the last rendering of a brand list with the digest of the rows it was rendered
// from (brands.Service.ListDigest).
type listCache struct {
	list brands.List
	p    atomic.Pointer[renderedList]
}

type renderedList struct {
	digest string
	body   []byte
}

// get serves the cached rendering when the list's rows are exactly those it was rendered from
// (one cheap digest query), and renders afresh otherwise. A stale entry can never be served: the
// digest changes with every change of a listed row, and a fresh rendering and its digest come
// from one snapshot. Concurrent misses may each render; the last one stored wins, and any of them
// is correct for its digest.
func (c *listCache) get(ctx context.Context, svc *brands.Service) ([]byte, error) {
	if cur := c.p.Load(); cur != nil {
		d, err := svc.ListDigest(ctx, c.list)
		if err != nil {
			return nil, err
		}
		if d == cur.digest {
			return cur.body, nil
		}
	}
	bs, d, err := svc.ListBrands(ctx, c.list)
	if err != nil {
		return nil, err
	}
	body := renderList(bs)
	c.p.Store(&renderedList{digest: d, body: body})
	return body, nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string: quotes, backslashes and control characters escaped,
// invalid UTF-8 replaced by U+FFFD, and U+2028/U+2029 escaped so the output is also safe JavaScript.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf = append(buf, s[start:i]...)
			buf = append(buf, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}
