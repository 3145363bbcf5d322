package child

import (
	"fmt"
	"os"
	"slices"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
)

// shellDevices are the device files a shell and the programs it runs
// write to whatever the policy: the bit bucket, the random sources and
// the terminal. /dev/pts holds the terminals themselves.
var shellDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// shellTerminals is the folder of the pseudo-terminals a shell, script(1)
// or an editor opens for writing.
const shellTerminals = "/dev/pts"

// writesRuleset is the write restriction's ruleset: every write refused
// but beneath roots (all write rights) and to the shellDevices and
// terminals (writing to them, never making or removing files there). In
// read-only mode roots is empty. Reads stay unrestricted: deny_read is
// the mount layer's.
func writesRuleset(roots []string) (int, error) {
	return writesRulesetOf(roots, append(slices.Clip(shellDevices), shellTerminals))
}

// writesRulesetOf is writesRuleset granting devices: a caller that adds
// some of shellDevices' rules later leaves them out.
func writesRulesetOf(roots, devices []string) (int, error) {
	if kernel.ABI() == 0 {
		return -1, fserr.New(fserr.IO, "landlock is not available on this kernel")
	}
	fd, err := kernel.WritesRuleset(existingDirs(roots), devices, true)
	if err != nil {
		return -1, fserr.Wrap(fserr.IO, fmt.Sprintf("landlock: %v", err), err)
	}
	return fd, nil
}

// existingDirs returns the paths that are folders now: Landlock rules
// are made on opened paths, and a root that is gone has nothing to allow.
func existingDirs(paths []string) []string {
	var dirs []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
	}
	return dirs
}
