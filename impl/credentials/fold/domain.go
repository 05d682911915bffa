package fold

import (
	"strings"

	"golang.org/x/net/idna"
)

// fullStops are the characters UTS #46 maps to the label separator "." (IDNA2008's full-stop
// variants): the ideographic full stop, the fullwidth full stop and the halfwidth ideographic
// full stop. A domain written with any of them is the same domain as with ".".
var fullStops = strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".")

// Domain is the one form of a mail or host domain that all its spellings share: the full-stop
// variants mapped to ".", then UTS #46 processing for lookup (idna.Lookup: case folding, NFKC
// mapping and Punycode), so bücher.example, BÜCHER.example and xn--bcher-kva.example are one
// domain, and gmail。com is gmail.com; without a final dot. A domain IDNA refuses (an underscore,
// a malformed xn-- label) is kept as Name folds it, with the full stops mapped: it is still one
// form for its spellings, and whether it can receive mail is not this function's question.
func Domain(d string) string {
	d = fullStops.Replace(Name(d))
	if a, err := idna.Lookup.ToASCII(d); err == nil {
		d = a
	}
	return strings.TrimSuffix(d, ".")
}
