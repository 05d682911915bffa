package main

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// direct returns the command that runs the tool of a `go tool` command line (go tool [flags] name
// [args]) without the go command: the binary `go tool -n` names, built once into Go's build cache,
// then the line's own arguments. Each oasdiff run then starts oasdiff alone, not the go command,
// which checks its whole toolchain first (half a second of CPU each; a release runs oasdiff once
// per surface and a test of it dozens of times). Any other line, or one go cannot resolve, is
// returned as it is, and running it reports what is wrong.
func direct(argv []string) []string {
	if len(argv) < 3 || filepath.Base(argv[0]) != "go" || argv[1] != "tool" {
		return argv
	}
	name := 2
	for name < len(argv) && strings.HasPrefix(argv[name], "-") {
		name++
	}
	if name == len(argv) {
		return argv
	}
	out, err := exec.Command(argv[0], append(append([]string{"tool", "-n"}, argv[2:name]...), argv[name])...).Output()
	bin := strings.TrimSpace(string(out))
	if err != nil || bin == "" || strings.ContainsAny(bin, " \n") {
		return argv
	}
	return append([]string{bin}, argv[name+1:]...)
}
