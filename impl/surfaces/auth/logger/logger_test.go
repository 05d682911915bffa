package logger_test

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"log/slog"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/logger"
)

// recorder is a Logger of a reader's own, as the seed describes it: a type with Logf.
type recorder struct{ lines []string }

func (r *recorder) Logf(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

var _ logger.Logger = (*recorder)(nil)
var _ logger.L = logger.Std

// TestLogger_FuncIsASink: a record logged through a Func's handler reaches the function as one
// line, level first, with its attributes and groups, and without a time (Logf's side stamps one).
func TestLogger_FuncIsASink(t *testing.T) {
	var r recorder
	l := logger.Of(logger.Func(r.Logf)).With("surface", "auth").WithGroup("login")
	l.Warn("avatar refused", "user", "u1", "err", "private address")
	l.Debug("debug too") // the function decides what to keep
	want := []string{
		`level=WARN msg="avatar refused" surface=auth login.user=u1 login.err="private address"`,
		`level=DEBUG msg="debug too" surface=auth`,
	}
	if strings.Join(r.lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("lines:\n%s\nwant:\n%s", strings.Join(r.lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestLogger_NoOpDiscards: NoOp (a nil Func) is the explicit choice of silence.
func TestLogger_NoOpDiscards(t *testing.T) {
	for name, s := range map[string]logger.L{"NoOp": logger.NoOp, "nil Func": logger.Func(nil)} {
		l := logger.Of(s)
		if l == nil || l.Enabled(context.Background(), slog.LevelError) {
			t.Errorf("%s: logger %v enabled; want one that discards", name, l)
		}
		l.Error("nothing") // must not panic
	}
	logger.NoOp.Logf("nothing %d", 1)
	if l := logger.ToSlog(nil); l.Enabled(context.Background(), slog.LevelError) {
		t.Error("ToSlog(nil) logs")
	}
	logger.FromSlog(nil).Logf("nothing")
}

// TestLogger_NilKeepsWarningsAndErrors: no logger given is not silence:
// warnings and errors, with their attributes and groups, reach slog.Default() as it is when they
// are written; debug and info lines do not.
func TestLogger_NilKeepsWarningsAndErrors(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	defer slog.SetDefault(old)
	for name, s := range map[string]logger.L{"nil": nil} {
		buf.Reset()
		l := logger.Of(s).With("surface", "auth").WithGroup("login")
		slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})))
		l.Info("hidden")
		l.Debug("hidden")
		l.Warn("refused", "host", "127.0.0.1")
		l.Error("failed", "request_id", "r1")
		want := "level=WARN msg=refused surface=auth login.host=127.0.0.1\nlevel=ERROR msg=failed surface=auth login.request_id=r1\n"
		if buf.String() != want {
			t.Errorf("%s: wrote\n%s\nwant\n%s", name, buf.String(), want)
		}
	}
}

// TestLogger_Std prints through the standard log package, whatever its output is set to then.
func TestLogger_Std(t *testing.T) {
	var buf bytes.Buffer
	flags, out := log.Flags(), log.Writer()
	log.SetFlags(0)
	log.SetOutput(&buf)
	defer func() { log.SetFlags(flags); log.SetOutput(out) }()
	logger.Std.Logf("[INFO] hello %s", "world")
	logger.Of(logger.Std).Info("through slog", "n", 2)
	want := "[INFO] hello world\nlevel=INFO msg=\"through slog\" n=2\n"
	if buf.String() != want {
		t.Fatalf("log output %q, want %q", buf.String(), want)
	}
}

// TestLogger_BothDirections: ToSlog carries a reader's own Logger into slog; FromSlog carries a
// *slog.Logger into the seed's form, reading go-pkgz's level marks.
func TestLogger_BothDirections(t *testing.T) {
	var r recorder
	logger.ToSlog(&r).Error("login failed", "provider", "github")
	if len(r.lines) != 1 || r.lines[0] != `level=ERROR msg="login failed" provider=github` {
		t.Fatalf("ToSlog: %q", r.lines)
	}

	var buf bytes.Buffer
	s := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	l := logger.FromSlog(s)
	l.Logf("[WARN] token for %s expired", "ada")
	l.Logf("[DEBUG] detail")
	l.Logf("[ERROR]   spaced")
	l.Logf("plain %d", 7)
	want := "level=WARN msg=\"token for ada expired\"\nlevel=DEBUG msg=detail\nlevel=ERROR msg=spaced\nlevel=INFO msg=\"plain 7\"\n"
	if buf.String() != want {
		t.Fatalf("FromSlog wrote\n%s\nwant\n%s", buf.String(), want)
	}
	// A slog logger given as FromSlog is the same logger to the library, not a wrapper.
	if logger.Of(l) != s {
		t.Error("Of(FromSlog(s)) wraps s")
	}
}
