package main

import "github.com/getkin/kin-openapi/openapi3filter"

// The auth surface's demo page is text/html, which kin-openapi does not decode by default, and
// avatars are images, decoded as opaque files: the tests here that validate every answer against
// the specs (the spec fuzz, the walks) read both.
func init() {
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)
}
