package logger_test

import (
	"bytes"
	"log"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/auth/logger"
)

func TestLogger_StdFuncAndNoOp(t *testing.T) {
	var buf bytes.Buffer
	prevOut, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(&buf)
	log.SetFlags(0)
	t.Cleanup(func() { log.SetOutput(prevOut); log.SetFlags(prevFlags) })

	logger.Std.Logf("[INFO] hello %s", "std")
	logger.NoOp.Logf("[INFO] never %s", "shown")
	logger.OrNoOp(nil).Logf("[INFO] nil is %s", "silent")
	if got := buf.String(); got != "[INFO] hello std\n" {
		t.Fatalf("std log output %q", got)
	}

	var got []string
	f := logger.Func(func(format string, args ...any) { got = append(got, format) })
	logger.OrNoOp(f).Logf("[WARN] through %s", "func")
	if strings.Join(got, "|") != "[WARN] through %s" {
		t.Fatalf("func adapter got %q", got)
	}
}
