package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// startPostmaster runs postgres as our child and waits until it accepts connections. exited is
// closed when the process ends.
func (c *Cluster) startPostmaster(ctx context.Context) (*exec.Cmd, chan struct{}, error) {
	logFile := filepath.Join(c.dir, "server.log")
	out, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(filepath.Join(c.bin, "postgres"), "-D", c.dataDir())
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.Stdout, cmd.Stderr = out, out
	// A process group of its own: a Ctrl-C in the terminal goes to the server, which drains its
	// requests and then stops PostgreSQL, instead of PostgreSQL dying under it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, nil, fmt.Errorf("pgcluster: postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(exited)
	}()
	if err := c.waitReady(ctx, exited); err != nil {
		// A stop can arrive while a restarted postmaster is still replaying its WAL, or just after
		// it began accepting connections: a clean shutdown leaves no stale postmaster.pid behind
		// for the next owner to wonder about, where a kill would.
		_ = c.shutdown(cmd, exited)
		return nil, nil, fmt.Errorf("%w (log: %s)", err, logFile)
	}
	return cmd, exited, nil
}

// supervise restarts the postmaster whenever it dies, until Stop, then shuts it down.
func (c *Cluster) supervise(proc *exec.Cmd, exited chan struct{}) {
	defer close(c.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		select {
		case <-c.stop:
			c.stopErr = c.shutdown(proc, exited)
			return
		case <-exited:
		}
		backoff := minRestartBackoff
		c.warnf("postgres (pid %d) died: %s; restarting in %s", proc.Process.Pid, proc.ProcessState, backoff)
		for {
			select {
			case <-c.stop:
				return
			case <-time.After(backoff):
			}
			var err error
			if proc, exited, err = c.startPostmaster(ctx); err == nil {
				c.warnf("postgres restarted (pid %d)", proc.Process.Pid)
				break
			}
			if ctx.Err() != nil {
				return
			}
			backoff = min(2*backoff, maxRestartBackoff)
			c.warnf("restarting postgres failed: %v; next try in %s", err, backoff)
		}
	}
}

// shutdown asks the postmaster for a fast shutdown (abort open transactions, checkpoint, exit) and
// waits for it, killing it when it does not finish within a minute.
func (c *Cluster) shutdown(proc *exec.Cmd, exited chan struct{}) error {
	_ = proc.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
		c.logf("postgres stopped")
		return nil
	case <-time.After(time.Minute):
		_ = proc.Process.Kill()
		<-exited
		return errors.New("pgcluster: postgres did not stop within a minute; killed")
	}
}

// waitReady polls until the server accepts connections, it exits, or 60 s pass.
func (c *Cluster) waitReady(ctx context.Context, exited <-chan struct{}) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(cctx, c.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(ctx)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgcluster: server did not accept connections: %w", err)
		}
		select {
		case <-exited:
			return errors.New("pgcluster: postgres exited while starting")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
