package supervisor

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/child"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// overlayMetacopy says the session's overlays copy up only the metadata
// of a file whose metadata alone changes: root's, which MountOverlay
// mounts with metacopy (a user namespace cannot), where the kernel's
// overlayfs has the option. A kernel whose overlayfs is not loaded yet
// says no.
func overlayMetacopy() bool {
	if os.Geteuid() != 0 {
		return false
	}
	_, err := os.Stat("/sys/module/overlay/parameters/metacopy")
	return err == nil
}

// probeOverlays tries each overlay of f as the session's applier would
// mount it, in a tmpfs of its own where f has one (OverlayMemory), and
// returns, for each, why the kernel refused it ("" where it did not).
// Where the probe itself cannot run, every one is refused.
func probeOverlays(self string, f plan.Files) []string {
	overlays := f.Overlays
	refused := make([]string, len(overlays))
	in, _ := json.Marshal(f)
	c := selfCommand(self, argCachesProbe)
	c.SysProcAttr = mountNamespace()
	c.Stdin = strings.NewReader(string(in))
	out, err := c.Output()
	if err == nil {
		err = json.Unmarshal(out, &refused)
	}
	if err != nil || len(refused) != len(overlays) {
		for i := range overlays {
			refused[i] = fmt.Sprintf("the probe failed: %v", err)
		}
	}
	return refused
}

// cachesProbe is the probe's whole life: it reads the overlays, mounts
// their tmpfs where they have one, then each in its own mount namespace,
// and prints why each failed.
func cachesProbe() int {
	if err := ownNamespaces(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return statusFailed
	}
	var f plan.Files
	if err := json.NewDecoder(os.Stdin).Decode(&f); err != nil {
		fmt.Fprintln(os.Stderr, "caches probe:", err)
		return statusFailed
	}
	refused := make([]string, len(f.Overlays))
	if f.OverlayMemory > 0 {
		if err := child.MountOverlayFolders(f.OverlayDir, f.OverlayMemory, f.Overlays); err != nil {
			for i := range refused {
				refused[i] = "the overlays' tmpfs: " + err.Error()
			}
			json.NewEncoder(os.Stdout).Encode(refused)
			return statusOK
		}
	}
	for i, o := range f.Overlays {
		if err := child.MountOverlay(o); err != nil {
			refused[i] = err.Error()
		}
	}
	json.NewEncoder(os.Stdout).Encode(refused)
	return statusOK
}

// overlayTmpfsSize is the size of the tmpfs a root session's overlays
// keep their upper and work folders in (plan.Files.OverlayMemory): what
// the file system of the session's folder dir has free, at most half
// the memory (tmpfs's own default), so a session holds no more than the
// folder on disk would have held. 0 keeps them on disk: an ordinary
// user's, whose overlays a user namespace mounts (the first process's
// compiled mounts make none), or where either figure cannot be read.
func overlayTmpfsSize(dir string) uint64 {
	if layout.UserNamespace() {
		return 0
	}
	var fs unix.Statfs_t
	var si unix.Sysinfo_t
	if unix.Statfs(dir, &fs) != nil || unix.Sysinfo(&si) != nil {
		return 0
	}
	free := fs.Bavail * uint64(fs.Bsize)
	half := uint64(si.Totalram) * uint64(si.Unit) / 2
	return max(min(free, half), 1<<20)
}
