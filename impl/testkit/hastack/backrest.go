package hastack

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/impl/platform/pgcluster"
)

// writeBackrestConfig writes pgBackRest's configuration: one repository in the stack's folder, one
// stanza whose hosts are every node (so a backup and the archive follow whichever is primary).
func (s *Stack) writeBackrestConfig() error {
	s.backrestConf = filepath.Join(s.dir, "pgbackrest.conf")
	for _, d := range []string{"repo", "backrest-log", "backrest-lock", "backrest-spool"} {
		if err := s.mkdir(filepath.Join(s.dir, d)); err != nil {
			return err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `[global]
repo1-path=%[1]s/repo
repo1-retention-full=2
start-fast=y
compress-type=none
archive-timeout=30
log-path=%[1]s/backrest-log
lock-path=%[1]s/backrest-lock
spool-path=%[1]s/backrest-spool
log-level-console=warn
log-level-file=info

[triad]
`, s.dir)
	// The nodes do not exist yet: their ports are picked with them, so the stanza is finished by
	// newNode's caller through finishBackrestConfig.
	return os.WriteFile(s.backrestConf, []byte(b.String()), 0o644)
}

// finishBackrestConfig adds every node to the stanza.
func (s *Stack) finishBackrestConfig() error {
	f, err := os.OpenFile(s.backrestConf, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	for i, n := range s.nodes {
		fmt.Fprintf(f, "pg%[1]d-path=%[2]s/data\npg%[1]d-port=%[3]d\npg%[1]d-socket-path=%[2]s\n", i+1, n.dir, n.pgPort)
	}
	return nil
}

// backrest runs pgbackrest command on the stanza as the postgres user.
func (s *Stack) backrest(ctx context.Context, command string, args ...string) error {
	_, err := s.backrestOut(ctx, command, args...)
	return err
}

// backrestOut is backrest returning what the command printed on stdout.
func (s *Stack) backrestOut(ctx context.Context, command string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, lookPath("pgbackrest"), append([]string{"--config=" + s.backrestConf, "--stanza=triad"}, append([]string{command}, args...)...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cmd.Env = append(os.Environ(), "HOME="+s.dir)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hastack: pgbackrest %s: %w: %s%s", command, err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// ArchiveNow switches the primary to a new WAL segment and waits until the archive has the one it
// left (pgbackrest check): everything committed so far can then be restored.
// Recovery to a time stops at the first commit after it: one is made first (assigning a
// transaction id writes a commit record), so the archive always reaches past the target.
func (s *Stack) ArchiveNow(ctx context.Context) error {
	if err := s.exec(ctx, s.OwnerURL(), "SELECT pg_current_xact_id()"); err != nil {
		return err
	}
	return s.backrest(ctx, "check")
}

// Restored is a cluster restored from the archive, running on its own socket.
type Restored struct {
	dir  string
	bin  string
	cred *syscall.Credential
}

// URL is the restored cluster's triad database as postgres.
func (r *Restored) URL() string {
	return fmt.Sprintf("postgres://postgres@/triad?host=%s&port=5432&sslmode=disable", r.dir)
}

// Stop stops the restored cluster (its files stay in the stack's folder).
func (r *Restored) Stop() {
	cmd := exec.Command(filepath.Join(r.bin, "pg_ctl"), "-D", filepath.Join(r.dir, "data"), "-m", "immediate", "stop")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	_ = cmd.Run()
}

// RestoreTo restores the last backup and the archived WAL up to target (a point in time) into a
// scratch cluster of its own under the stack's folder, starts it (unix socket only, archiving
// off, no synchronous standby to wait for) and returns once it has reached the target and been
// promoted. Call ArchiveNow after target first. timeline is the timeline to recover along (the
// leader's, from LeaderTimeline): not "latest", which after a stalled primary may be a discarded
// branch that ends before target.
func (s *Stack) RestoreTo(ctx context.Context, target time.Time, timeline int) (*Restored, error) {
	dir := filepath.Join(s.dir, "restore")
	if err := s.mkdir(dir); err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	if err := s.backrest(ctx, "restore", "--pg1-path="+data, "--type=time",
		"--target="+target.UTC().Format("2006-01-02 15:04:05.000000-07"), "--target-action=promote", fmt.Sprintf("--target-timeline=%d", timeline)); err != nil {
		return nil, err
	}
	bin, err := pgcluster.FindBinaries()
	if err != nil {
		return nil, err
	}
	r := &Restored{dir: dir, bin: bin, cred: s.cred}
	opts := fmt.Sprintf("-c port=5432 -c listen_addresses='' -c unix_socket_directories='%s' -c archive_mode=off "+
		"-c synchronous_standby_names='' -c hba_file='%s/pg_hba.conf' -c ident_file='%s/pg_ident.conf' -c hot_standby=on",
		dir, data, data)
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_ctl"), "-D", data, "-l", filepath.Join(dir, "server.log"), "-o", opts, "start")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("hastack: starting the restored cluster: %w: %s", err, out)
	}
	err = waitFor(ctx, 2*time.Minute, func() error {
		conn, err := pgx.Connect(ctx, r.URL())
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		var recovering bool
		if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&recovering); err != nil {
			return err
		}
		if recovering {
			return fmt.Errorf("still recovering")
		}
		return nil
	})
	if err != nil {
		r.Stop()
		return nil, fmt.Errorf("hastack: restored cluster: %w; log: %s\n%s", err, tail(filepath.Join(dir, "server.log"), 20),
			tail(filepath.Join(data, "log", "postgresql.log"), 30))
	}
	return r, nil
}

// LeaderTimeline is the leader's timeline as `patronictl list` prints it (its TL column): the
// runbook's first step before a restore.
func (s *Stack) LeaderTimeline(ctx context.Context) (int, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.opts.Patroni, "patronictl"), "-c", s.nodes[0].config, "list", "--format", "json")
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("hastack: patronictl list: %w", err)
	}
	var members []struct {
		Member string `json:"Member"`
		Role   string `json:"Role"`
		TL     int    `json:"TL"`
	}
	if err := json.Unmarshal(out, &members); err != nil {
		return 0, fmt.Errorf("hastack: patronictl list: %w: %s", err, out)
	}
	for _, m := range members {
		if m.Role == "Leader" && m.TL > 0 {
			return m.TL, nil
		}
	}
	return 0, fmt.Errorf("hastack: patronictl list names no leader: %s", out)
}
