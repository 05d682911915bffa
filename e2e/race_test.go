//go:build race

package e2e

// raceEnabled is true when the tests run with -race; the server binary is then built with it too.
const raceEnabled = true
