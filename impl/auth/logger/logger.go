// Package logger is the small logging interface the auth service and its providers write to. It is
// deliberately one method wide so any logging library can be adapted with Func.
package logger

import (
	"log"
)

// L is what the auth service logs through.
type L interface {
	Logf(format string, args ...any)
}

// Func adapts a plain function to L.
type Func func(format string, args ...any)

// Logf calls f.
func (f Func) Logf(format string, args ...any) { f(format, args...) }

// NoOp discards everything; it is the default logger of the auth service.
var NoOp L = Func(func(string, ...any) {})

// Std writes through the standard library's default logger.
var Std L = Func(func(format string, args ...any) { log.Printf(format, args...) })

// OrNoOp returns l, or NoOp when l is nil, so callers never nil-check.
func OrNoOp(l L) L {
	if l == nil {
		return NoOp
	}
	return l
}
