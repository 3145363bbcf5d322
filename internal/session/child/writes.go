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

// restrictWrites restricts the calling thread (Run's, locked), and every
// process it will start, so that the kernel refuses every write except beneath roots (all write
// rights) and to the shellDevices and terminals (writing to them, never
// making or removing files there). No process of the tree can lift it.
// dsh-fs exec's child calls it last, just before it executes the shell;
// in read-only mode roots is empty. No device node can be made, and where
// the ABI has scopes no signal or abstract socket reaches outside the
// tree. Reads stay unrestricted: deny_read is the mount layer's.
func restrictWrites(roots []string) error {
	if kernel.ABI() == 0 {
		return fserr.New(fserr.IO, "landlock is not available on this kernel")
	}
	if err := kernel.RestrictWrites(existingDirs(roots), append(slices.Clip(shellDevices), shellTerminals), true); err != nil {
		return fserr.Wrap(fserr.IO, fmt.Sprintf("landlock: %v", err), err)
	}
	return nil
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
