package hastack

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestArchive_BranchSegments checks the reading CompleteArchive relies on to push only an old
// timeline's history: a timeline history file (PostgreSQL's format, as a promotion writes it) gives,
// for each ancestor timeline, the segment in which the next one branched off; a WAL file name gives
// its segment number.
func TestArchive_BranchSegments(t *testing.T) {
	dir := t.TempDir()
	history := filepath.Join(dir, "00000003.history")
	if err := os.WriteFile(history, []byte("1\t0/5150028\tno recovery target specified\n\n2\t1/070000A0\tno recovery target specified\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readHistory(history)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[uint64]uint64{1: 5, 2: 0x107}; !reflect.DeepEqual(got, want) {
		t.Errorf("readHistory = %v, want %v", got, want)
	}
	if got, err := readHistory(filepath.Join(dir, "00000001.history")); err != nil || len(got) != 0 {
		t.Errorf("timeline 1 (no history file): %v, %v; want nothing", got, err)
	}
	if err := os.WriteFile(history, []byte("1\tnot-an-lsn\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readHistory(history); err == nil {
		t.Error("a malformed history line was accepted")
	}
	for name, want := range map[string]uint64{"000000010000000000000005": 5, "000000020000000100000007": 0x107, "0000000300000000000000FF": 0xFF} {
		if got := segmentNo(name); got != want {
			t.Errorf("segmentNo(%s) = %#x, want %#x", name, got, want)
		}
	}
	for name, want := range map[string]bool{"000000010000000000000005": true, "000000010000000000000005.partial": false, "00000002.history": false, "archive_status": false} {
		if got := segmentName.MatchString(name); got != want {
			t.Errorf("segmentName(%s) = %v, want %v", name, got, want)
		}
	}
}
