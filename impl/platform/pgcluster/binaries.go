package pgcluster

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrNoBinaries means no PostgreSQL server binaries were found on this machine.
var ErrNoBinaries = errors.New("pgcluster: PostgreSQL binaries (initdb, pg_ctl, postgres) not found; " +
	"install them with `apt-get install postgresql` or set DATABASE_URL to an existing server")

// FindBinaries returns the folder holding initdb, pg_ctl and postgres: PATH first, then
// `pg_config --bindir`, then the newest /usr/lib/postgresql/*/bin.
func FindBinaries() (string, error) {
	var candidates []string
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			candidates = append(candidates, filepath.Dir(real))
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(versions, func(i, j int) bool { return pgMajor(versions[i]) > pgMajor(versions[j]) })
	candidates = append(candidates, versions...)
	return firstWithBinaries(candidates)
}

// firstWithBinaries returns the first folder that holds all three server programs.
func firstWithBinaries(candidates []string) (string, error) {
	for _, dir := range candidates {
		if isExec(filepath.Join(dir, "initdb")) && isExec(filepath.Join(dir, "pg_ctl")) && isExec(filepath.Join(dir, "postgres")) {
			return dir, nil
		}
	}
	return "", ErrNoBinaries
}

func pgMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
