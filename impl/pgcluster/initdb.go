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
	// listen_addresses='' keeps the server off TCP entirely: only the socket in our folder.
	conf := fmt.Sprintf("\nlisten_addresses = ''\nunix_socket_directories = '%s'\nmax_connections = 200\n", c.socketDir())
	if ephemeral {
		conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
	}
	f, err := os.OpenFile(filepath.Join(c.dataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(conf); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
