package brands

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
	"unicode/utf8"

	"github.com/triadhq/triad/gen/db"
)

// listRow is one brand of a list with its row version. Both list queries' row types convert to it.
type listRow = db.ListAvailableBrandRowsRow

// renderList writes rows as the JSON array of Brand objects (the field order of api/brands.yaml)
// and returns it with the digest of their versions. The digest is computed exactly as the
// *BrandsDigest queries compute it in SQL (md5 of the versions joined by commas), so the two can
// be compared. Rendering by appending to one buffer avoids encoding/json's reflection: it is what
// lets a cache miss keep pace with a plain scan-and-encode handler.
func renderList(rows []listRow) (digest, body string) {
	h := md5.New()
	var num [20]byte
	buf := make([]byte, 0, 64+len(rows)*384)
	buf = append(buf, '[')
	for i, r := range rows {
		if i > 0 {
			buf = append(buf, ',')
			h.Write([]byte{','})
		}
		h.Write(strconv.AppendInt(num[:0], r.Version, 10))
		buf = appendBrand(buf, r)
	}
	buf = append(buf, ']')
	return hex.EncodeToString(h.Sum(nil)), string(buf)
}

// appendBrand appends one Brand object, in the field order of api/brands.yaml.
func appendBrand(buf []byte, r listRow) []byte {
	buf = append(buf, `{"_id":`...)
	buf = appendString(buf, r.ID)
	buf = append(buf, `,"name":`...)
	buf = appendString(buf, r.Name)
	buf = append(buf, `,"description":`...)
	buf = appendString(buf, r.Description)
	buf = append(buf, `,"url":`...)
	buf = appendString(buf, r.Url)
	buf = append(buf, `,"featuredImage":`...)
	buf = appendString(buf, r.FeaturedImage)
	buf = append(buf, `,"availability":`...)
	buf = strconv.AppendBool(buf, r.Availability)
	buf = append(buf, `,"isFeatured":`...)
	buf = strconv.AppendBool(buf, r.IsFeatured)
	buf = append(buf, `,"products":`...)
	if len(r.Products) == 0 {
		buf = append(buf, "[]"...)
	} else {
		buf = append(buf, r.Products...) // jsonb text from PostgreSQL: valid JSON already
	}
	buf = append(buf, `,"subscriberCount":`...)
	buf = strconv.AppendInt(buf, int64(r.SubscriberCount), 10)
	return append(buf, '}')
}

// TimeLayout is ISO 8601 in UTC with milliseconds, like JavaScript's toISOString.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// renderMe writes the profile of GetBrandMeRows' rows (all of one user) with the presented token.
func renderMe(tok string, rows []db.GetBrandMeRowsRow) []byte {
	u := rows[0]
	buf := make([]byte, 0, 256+len(rows)*384)
	buf = append(buf, `{"_id":`...)
	buf = appendString(buf, u.UserID)
	buf = append(buf, `,"token":`...)
	buf = appendString(buf, tok)
	buf = append(buf, `,"email":`...)
	buf = appendString(buf, u.Email)
	buf = append(buf, `,"name":`...)
	buf = appendString(buf, u.UserName)
	buf = append(buf, `,"isAdmin":`...)
	buf = strconv.AppendBool(buf, u.IsAdmin)
	buf = append(buf, `,"subscriptions":[`...)
	n := 0
	for _, r := range rows {
		if !r.ID.Valid { // the one row of a user without subscriptions
			continue
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		n++
		buf = appendBrand(buf, listRow{
			ID: r.ID.String, Name: r.Name.String, Description: r.Description.String, Url: r.Url.String,
			FeaturedImage: r.FeaturedImage.String, Availability: r.Availability.Bool, IsFeatured: r.IsFeatured.Bool,
			Products: r.Products, SubscriberCount: r.SubscriberCount.Int32,
		})
	}
	buf = append(buf, `],"created_at":`...)
	buf = appendString(buf, u.CreatedAt.UTC().Format(TimeLayout))
	return append(buf, '}')
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
