//go:build !race

package race

// raceEnabled says this test binary, and so the dsh-fs it runs as, is
// race-instrumented: each call costs several times the CPU.
const raceEnabled = false
