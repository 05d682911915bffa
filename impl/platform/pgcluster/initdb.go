package pgcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// SystemUser is the credential PostgreSQL's programs (and PgBouncer, which refuses root too) must
// run under: the `postgres` system user when this process is root, nil (this process's own user)
// otherwise.
func SystemUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	return postgresCredential()
}

func postgresCredential() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgcluster: running as root needs the `postgres` system user (apt-get install postgresql creates it): %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// mkdirOwned creates dir (and its parents) and hands dir to the server's user, so a root-owned
// process can keep a cluster in its own data folder.
func (c *Cluster) mkdirOwned(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if c.cred != nil {
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return err
		}
		// The postgres user must be able to reach the folder through its parents.
		for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			if fi.Mode().Perm()&0o001 == 0 {
				if err := os.Chmod(p, fi.Mode().Perm()|0o011); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	return cmd
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	out, err := c.command(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgcluster: %s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (c *Cluster) initdb(ctx context.Context, ephemeral bool) error {
	args := []string{"-D", c.dataDir(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"}
	if ephemeral {
		args = append(args, "--no-sync")
	}
	if err := c.run(ctx, "initdb", args...); err != nil {
		return err
	}
	conf := c.ownSocket()
	if ephemeral {
		conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
	}
	return appendFile(filepath.Join(c.dataDir(), "postgresql.conf"), conf)
}

// ownSocket is the configuration that keeps the server off TCP entirely (listen_addresses=”):
// only the socket in our folder.
func (c *Cluster) ownSocket() string {
	return fmt.Sprintf("\nlisten_addresses = ''\nunix_socket_directories = '%s'\nmax_connections = %d\n", c.socketDir(), c.conns)
}

// basebackup makes the data folder a streaming standby of the cluster primaryURL reaches: a copy
// of its data with standby.signal and primary_conninfo (`pg_basebackup -R`), on a socket of its
// own (the copied postgresql.conf names the primary's, which postgresql.auto.conf overrides).
func (c *Cluster) basebackup(ctx context.Context, primaryURL string) error {
	if err := c.run(ctx, "pg_basebackup", "-D", c.dataDir(), "-R", "-X", "stream", "-c", "fast", "-d", primaryURL); err != nil {
		return err
	}
	return appendFile(filepath.Join(c.dataDir(), "postgresql.auto.conf"), c.ownSocket())
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
