// Package logger is the seed's logger for the auth library (auth-service.md, "Hooks and adapters":
// Logger with Logf(format, args...), the predefined NoOp and Std, a logger function adapter), in
// the shape go-pkgz/auth's logger package has, and its bridges to log/slog, which the library logs
// through: ToSlog turns a Logf logger into a *slog.Logger, FromSlog a *slog.Logger into a Logf
// logger.
//
// The library's logger options (auth.Options.Logger, oauthserver.Options.Logger, sender.NewEmail's
// logger, provider.TelegramHandler.L) take an L: any value with Logf(format string, args ...any),
// so a site's own logger type and code written from the seed compile as they stand:
//
//	auth.Options{..., Logger: logger.Std}
//	auth.Options{..., Logger: myLog}                 // any type with Logf(format string, args ...any)
//	auth.Options{..., Logger: logger.FromSlog(slogL)} // a *slog.Logger, its records kept structured
//
// Left nil, an option still passes warnings and errors to the process's standard log (Errors), so a
// failure the library answers 500 for is never silent by omission; logger.NoOp is the explicit
// choice of silence.
package logger

import (
	"context"
	"fmt"

	"log"
	"log/slog"
	"slices"
	"strings"
)

// L is the seed's Logger: the one method the library's log lines need.
type L interface {
	Logf(format string, args ...any)
}

// Logger is the seed's name for L.
type Logger = L

// Func adapts a function to L (the seed's logger function adapter). A nil Func prints nothing.
// As a library option a Func's log records reach the function as single lines,
// `LEVEL message key=value ...`, the form go-pkgz/auth's lines took ("[INFO] ...").
type Func func(format string, args ...any)

// Logf calls f, unless f is nil.
func (f Func) Logf(format string, args ...any) {
	if f != nil {
		f(format, args...)
	}
}

// Handler is the slog handler the library logs a Func through (Of): each record becomes one Logf call.
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

// Of returns the *slog.Logger the library logs an L through. An L that is also a slog source (a
// Func, FromSlog's) gives its handler, so records keep their levels and attributes; any other L
// gets each record as one Logf line, `level=WARN msg="..." key=value ...`. Nil (no logger given) is
// Errors: warnings and errors still reach the process's standard log. NoOp (a nil Func) is the
// explicit choice of silence and discards everything.
func Of(l L) *slog.Logger {
	switch v := l.(type) {
	case nil:
		return Errors
	case slogL:
		return v.s
	case interface{ Handler() slog.Handler }:
		return slog.New(v.Handler())
	}
	return slog.New(Func(l.Logf).Handler())
}

// Errors is the library's logger where none was given: warnings and errors only, through
// slog.Default() as it is when each record is written (the standard log package's output unless
// the program set another default).
var Errors = slog.New(warnings{})

// warnings passes records at Warn and above to slog.Default()'s handler of the moment, with the
// attributes and groups added on the way (ops, in order).
type warnings struct {
	ops []func(slog.Handler) slog.Handler
}

func (h warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && slog.Default().Handler().Enabled(ctx, l)
}

func (h warnings) Handle(ctx context.Context, r slog.Record) error {
	d := slog.Default().Handler()
	for _, op := range h.ops {
		d = op(d)
	}
	return d.Handle(ctx, r)
}

func (h warnings) WithAttrs(as []slog.Attr) slog.Handler {
	return warnings{ops: append(slices.Clip(h.ops), func(d slog.Handler) slog.Handler { return d.WithAttrs(as) })}
}

func (h warnings) WithGroup(name string) slog.Handler {
	return warnings{ops: append(slices.Clip(h.ops), func(d slog.Handler) slog.Handler { return d.WithGroup(name) })}
}

// ToSlog turns any L (the seed's Logger, yours included) into a *slog.Logger: each record becomes
// one Logf line as Func's Handler writes it. A nil l discards.
func ToSlog(l L) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return Of(l)
}

// FromSlog turns a *slog.Logger into an L, for a library option or code that hands the seed's
// Logger around. As a library option it is the *slog.Logger itself (Of gives it back), records
// structured as they are. Called as Logf, a line starting with go-pkgz/auth's level marks
// "[DEBUG]", "[INFO]", "[WARN]" or "[ERROR]" is logged at that level without the mark, any other
// line at Info. A nil s discards.
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
