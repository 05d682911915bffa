package hastack

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// CompleteArchive makes the WAL archive whole after a promotion and waits until it is, so that a
// point-in-time restore can cross the new timeline: the new primary pushes every complete segment
// of the timelines before its own that it holds and the archive lacks, then switches to a new
// segment and waits until the archive has it (ArchiveNow). It returns the segments it pushed.
//
// Why the first step: with archive_mode=on only a primary archives. A standby marks what it
// streams as done, so a segment the old primary completed but had not archived when it crashed
// is in no archive unless the new primary, which streamed it, pushes it. (archive_mode=always
// would have the standby push everything, but pgBackRest 2.45's check and backup refuse it: a
// standby's copy of a segment can have another checksum than the primary's, and two archivers
// then conflict.) A
// planned switchover leaves no such gap: the old primary archives its last segment as it stops.
// Only segments before the point where each timeline branched off are pushed; from that point on
// the next timeline's segment holds the same WAL, and its own .partial copy is archived by
// PostgreSQL at the promotion.
func (s *Stack) CompleteArchive(ctx context.Context) ([]string, error) {
	n, tli, branches, err := s.leaderTimeline(ctx)
	if err != nil {
		return nil, err
	}
	wal := filepath.Join(n.dir, "data", "pg_wal")
	listing, err := s.backrestOut(ctx, "repo-ls", "--recurse", "archive/triad")
	if err != nil {
		return nil, err
	}
	archived := map[string]bool{}
	for _, line := range strings.Split(listing, "\n") {
		if name := filepath.Base(strings.TrimSpace(line)); len(name) > 24 && segmentName.MatchString(name[:24]) && name[24] == '-' {
			archived[name[:24]] = true
		}
	}
	entries, err := os.ReadDir(wal)
	if err != nil {
		return nil, err
	}
	var pushed []string
	for _, e := range entries {
		name := e.Name()
		if !segmentName.MatchString(name) || archived[name] {
			continue
		}
		segTLI, _ := strconv.ParseUint(name[:8], 16, 32)
		end, ok := branches[segTLI]
		if !ok || segTLI >= tli || segmentNo(name) >= end {
			continue
		}
		if err := s.backrest(ctx, "archive-push", "--pg1-path="+filepath.Join(n.dir, "data"), filepath.Join(wal, name)); err != nil {
			return pushed, err
		}
		pushed = append(pushed, name)
	}
	return pushed, s.ArchiveNow(ctx)
}

// leaderTimeline is the leading node, its timeline and that timeline's history (readHistory).
func (s *Stack) leaderTimeline(ctx context.Context) (*node, uint64, map[uint64]uint64, error) {
	i, err := s.Leader(ctx)
	if err != nil {
		return nil, 0, nil, err
	}
	n := s.nodes[i]
	var current string
	if err := s.queryRow(ctx, s.nodeURL(n, "postgres"), "SELECT pg_walfile_name(pg_current_wal_lsn())", &current); err != nil {
		return nil, 0, nil, err
	}
	tli, err := strconv.ParseUint(current[:8], 16, 32)
	if err != nil {
		return nil, 0, nil, fmt.Errorf("hastack: WAL file %q: %w", current, err)
	}
	branches, err := readHistory(filepath.Join(n.dir, "data", "pg_wal", fmt.Sprintf("%08X.history", tli)))
	return n, tli, branches, err
}

// DropArchivedBeforeBranch removes from the repository the last complete segment of the timeline
// the leader's branched off, as if the primary that wrote it had died before archiving it: the
// gap a crash can leave, which CompleteArchive must close. It returns the segment's name. For
// testing the archive only.
func (s *Stack) DropArchivedBeforeBranch(ctx context.Context) (string, error) {
	_, _, branches, err := s.leaderTimeline(ctx)
	if err != nil {
		return "", err
	}
	var parent uint64
	for tli := range branches {
		parent = max(parent, tli)
	}
	if parent == 0 || branches[parent] == 0 {
		return "", fmt.Errorf("hastack: no branch to drop a segment before: %v", branches)
	}
	seg := branches[parent] - 1
	name := fmt.Sprintf("%08X%08X%08X", parent, seg/0x100, seg%0x100)
	files, err := filepath.Glob(filepath.Join(s.dir, "repo", "archive", "triad", "*", name[:16], name+"-*"))
	if err != nil || len(files) == 0 {
		return "", fmt.Errorf("hastack: %s is not in the archive (%v)", name, err)
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			return "", err
		}
	}
	return name, nil
}

// segmentName is a complete WAL segment's file name: timeline, log, segment, 8 hex digits each.
var segmentName = regexp.MustCompile(`^[0-9A-F]{24}$`)

// segmentNo is the segment number of a WAL file name (16 MB segments: log × 256 + segment).
func segmentNo(name string) uint64 {
	log, _ := strconv.ParseUint(name[8:16], 16, 32)
	seg, _ := strconv.ParseUint(name[16:24], 16, 32)
	return log*0x100 + seg
}

// readHistory reads a timeline history file: for each ancestor timeline, the segment number in
// which the next timeline branched off it (its segments before that one are history).
func readHistory(path string) (map[uint64]uint64, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[uint64]uint64{}, nil // timeline 1: no history
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[uint64]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		tli, err1 := strconv.ParseUint(fields[0], 10, 32)
		hi, lo, ok := strings.Cut(fields[1], "/")
		h, err2 := strconv.ParseUint(hi, 16, 32)
		l, err3 := strconv.ParseUint(lo, 16, 32)
		if err1 != nil || err2 != nil || err3 != nil || !ok {
			return nil, fmt.Errorf("hastack: %s: bad line %q", path, sc.Text())
		}
		out[tli] = (h<<32 | l) / (16 << 20)
	}
	return out, sc.Err()
}

// queryRow runs one query on a connection of its own and scans its one row into dest.
func (s *Stack) queryRow(ctx context.Context, url, sql string, dest ...any) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return conn.QueryRow(ctx, sql).Scan(dest...)
}
