package provider

import (
	"crypto/sha1" //nolint:gosec // a stable pseudonym, as in token.HashID, not a security hash
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// GoPkgzUserID derives user ids the way go-pkgz/auth v2 does by default, so a site moving from that
// library keeps its users' ids (and with them their data and avatars):
//   - dev: the dev server's user name as it is, without a prefix;
//   - github: "github_" + SHA-1 of the login (not of the numeric id; a site that had turned on
//     go-pkgz's GithubNumericID keeps "github_" + GoPkgzHash(rawID) for github instead);
//   - google, facebook, microsoft, yandex, battlenet: "<name>_" + SHA-1 of the user-info field
//     go-pkgz reads (sub for google, id for the others) written as go-pkgz writes it, see below;
//   - every other provider: "<name>_" + SHA-1 of the same raw id this library uses (a direct or
//     verified login's user or address, Telegram's user id, Apple's sub, Twitter's id, Patreon's id).
//
// go-pkgz decodes user info into a map of interface values, so a JSON number becomes a float64,
// and formats it with %v: Battle.net's numeric id 123456789 is hashed as "1.23456789e+08" (ids
// under 1,000,000 print as plain digits). GoPkgzUserID does the same with a numeric field, which
// among the built-ins only Battle.net sends; this library's own derivation (token.UserID) hashes
// the exact digits. When the field is missing (go-pkgz would hash an empty string, the same for
// every user) the raw id is used instead.
//
// Like go-pkgz, a value that already is 40 hex digits is taken as a hash and kept (GoPkgzHash).
func GoPkgzUserID(name, rawID string, data UserData) string {
	if name == DevName {
		return rawID
	}
	if key, ok := goPkgzField[name]; ok {
		if v, ok := goPkgzValue(data, key); ok {
			return name + "_" + GoPkgzHash(v)
		}
	}
	return name + "_" + GoPkgzHash(rawID)
}

// goPkgzField is the top-level user-info field go-pkgz/auth v2 hashes into each built-in OAuth
// provider's id through its map-based reader.
var goPkgzField = map[string]string{
	GitHubName: "login", GoogleName: "sub", FacebookName: "id", MicrosoftName: "id",
	YandexName: "id", BattleNetName: "id",
}

// goPkgzValue renders data[key] as go-pkgz's map reader does: strings as they are, numbers as the
// float64 encoding/json makes of them printed with %v. ok is false for a missing, null or
// non-scalar field, and for a number float64 cannot hold (go-pkgz's decoding fails on it).
func goPkgzValue(data UserData, key string) (string, bool) {
	switch v := data[key].(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case json.Number:
		f, err := strconv.ParseFloat(v.String(), 64)
		if err != nil {
			return "", false
		}
		return fmt.Sprint(f), true
	case float64:
		return fmt.Sprint(v), true
	}
	return "", false
}

var hexSHA1 = regexp.MustCompile(`^[a-fA-F0-9]{40}$`)

// GoPkgzHash is go-pkgz/auth's token.HashID with SHA-1: the hex SHA-1 of v, except that a v
// already shaped like one (40 hex digits) is returned unchanged. go-pkgz's ids are
// "<provider>_" + GoPkgzHash(raw id); a site that computes ids outside a login (an admin tool, a
// data migration) can compute them the same way.
func GoPkgzHash(v string) string {
	if hexSHA1.MatchString(v) {
		return v
	}
	h := sha1.Sum([]byte(v)) //nolint:gosec // see the import
	return hex.EncodeToString(h[:])
}
