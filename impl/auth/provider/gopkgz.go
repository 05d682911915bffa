package provider

import (
	"crypto/sha1" //nolint:gosec // a stable pseudonym, as in token.HashID, not a security hash
	"encoding/hex"
	"regexp"
)

// GoPkgzUserID derives user ids the way go-pkgz/auth v2 does by default, so a site moving from that
// library keeps its users' ids (and with them their data and avatars):
//   - dev: the dev server's user name as it is, without a prefix;
//   - github: "github_" + SHA-1 of the login (not of the numeric id; a site that had turned on
//     go-pkgz's GithubNumericID keeps token.UserID's derivation for github instead);
//   - every other provider: "<name>_" + SHA-1 of the same raw id this library uses (Google's sub,
//     Facebook's id, a direct or verified login's user or address, Telegram's user id, Apple's sub).
//
// Like go-pkgz, a raw id that already is 40 hex digits is taken as a hash and kept.
func GoPkgzUserID(name, rawID string, data UserData) string {
	switch name {
	case DevName:
		return rawID
	case GitHubName:
		if login := data.Value("login"); login != "" {
			return name + "_" + goPkgzHash(login)
		}
	}
	return name + "_" + goPkgzHash(rawID)
}

var hexSHA1 = regexp.MustCompile(`^[a-fA-F0-9]{40}$`)

// goPkgzHash is SHA-1 hex, except that a value already shaped like one is returned unchanged.
func goPkgzHash(v string) string {
	if hexSHA1.MatchString(v) {
		return v
	}
	h := sha1.Sum([]byte(v)) //nolint:gosec // see the import
	return hex.EncodeToString(h[:])
}
