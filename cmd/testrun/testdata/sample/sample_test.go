// Package sample is what TestRun_ExitStatusAndEvents runs go test on.
package sample

import (
	"os"
	"testing"
)

func TestSample(t *testing.T) {
	if os.Getenv("TESTRUN_SAMPLE_FAIL") == "1" {
		t.Fatal("failing as asked")
	}
}
