// Package logger is the seed's logger for the auth library (auth-service.md, "Hooks and adapters":
// Logger with Logf(format, args...), the predefined NoOp and Std, a logger function adapter), in
// the shape go-pkgz/auth's logger package has, and its bridges to log/slog, which the library logs
// through: ToSlog turns a Logf logger into a *slog.Logger, FromSlog a *slog.Logger into a Logf
// logger.
//
// The library's logger options (auth.Options.Logger and the like) take a Sink: a *slog.Logger as
// before, or Std, NoOp or any Func, so code written from the seed compiles as it stands:
//
//	auth.Options{..., Logger: logger.Std}
//	auth.Options{..., Logger: logger.Func(func(format string, args ...any) { myLog.Printf(format, args...) })}
//	auth.Options{..., Logger: logger.Func(myL.Logf)} // an L of your own
package logger

import (
	"context"
	"fmt"

	"log"
	"log/slog"
	"strings"
)

// L is the seed's Logger: the one method the library's log lines need.
type L interface {
	Logf(format string, args ...any)
}

// Logger is the seed's name for L.
type Logger = L

// Func adapts a function to L (the seed's logger function adapter). A nil Func prints nothing.
// Func is also a Sink: as a library option its log records reach the function as single lines,
// `LEVEL message key=value ...`, the form go-pkgz/auth's lines took ("[INFO] ...").
type Func func(format string, args ...any)

// Logf calls f, unless f is nil.
func (f Func) Logf(format string, args ...any) {
	if f != nil {
		f(format, args...)
	}
}

// Handler lets a Func stand where the library takes a Sink: each record becomes one Logf call.
func (f Func) Handler() slog.Handler {
	if f == nil {
		return slog.DiscardHandler
	}
	return slog.NewTextHandler(lineWriter{f}, &slog.HandlerOptions{
		Level: slog.LevelDebug, // the receiving function decides what to keep
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			// The Logf side stamps its own time (log.Printf does), and the bare level reads better.
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	})
}

// lineWriter hands each record slog's text handler writes (one Write per record) to Logf.
type lineWriter struct{ f Func }

func (w lineWriter) Write(p []byte) (int, error) {
	w.f("%s", strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// NoOp prints nothing: the library's default.
var NoOp = Func(nil)

// Std prints through the standard library's log package (log.Printf: its flags, prefix and output).
var Std = Func(log.Printf)

// Sink is what the library's logger options take: a *slog.Logger, or a seed-form logger of this
// package (Std, NoOp, a Func). Anything with a Handler method fits.
type Sink interface {
	Handler() slog.Handler
}

// Of returns the *slog.Logger a Sink stands for; nil, a nil *slog.Logger or a nil Func discard.
func Of(s Sink) *slog.Logger {
	switch v := s.(type) {
	case nil:
		return slog.New(slog.DiscardHandler)
	case *slog.Logger:
		if v == nil {
			return slog.New(slog.DiscardHandler)
		}
		return v
	}
	return slog.New(s.Handler())
}

// ToSlog turns any L (the seed's Logger, yours included) into a *slog.Logger: each record becomes
// one Logf line as Func's Handler writes it. A nil l discards.
func ToSlog(l L) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	if f, ok := l.(Func); ok {
		return Of(f)
	}
	return slog.New(Func(l.Logf).Handler())
}

// FromSlog turns a *slog.Logger into an L, for code that hands the seed's Logger around. A line
// starting with go-pkgz/auth's level marks "[DEBUG]", "[INFO]", "[WARN]" or "[ERROR]" is logged at
// that level without the mark; any other line at Info. A nil s discards.
func FromSlog(s *slog.Logger) L {
	if s == nil {
		return NoOp
	}
	return slogL{s}
}

type slogL struct{ s *slog.Logger }

// levelMarks are go-pkgz/auth's level prefixes.
var levelMarks = []struct {
	mark  string
	level slog.Level
}{{"[DEBUG]", slog.LevelDebug}, {"[INFO]", slog.LevelInfo}, {"[WARN]", slog.LevelWarn}, {"[ERROR]", slog.LevelError}}

func (l slogL) Logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	level := slog.LevelInfo
	for _, m := range levelMarks {
		if rest, ok := strings.CutPrefix(msg, m.mark); ok {
			msg, level = strings.TrimSpace(rest), m.level
			break
		}
	}
	l.s.Log(context.Background(), level, msg)
}
