package supervisor

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/dshfs/dsh-fs/internal/session/child"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// probeOverlays tries each of overlays as the session's child would
// mount it, and returns, for each, why the kernel refused it ("" where
// it did not). Where the probe itself cannot run, every one is refused.
func probeOverlays(self string, overlays []plan.Overlay) []string {
	refused := make([]string, len(overlays))
	in, _ := json.Marshal(overlays)
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
// each in its own mount namespace, and prints why each failed.
func cachesProbe() int {
	if err := ownNamespaces(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return statusFailed
	}
	var overlays []plan.Overlay
	if err := json.NewDecoder(os.Stdin).Decode(&overlays); err != nil {
		fmt.Fprintln(os.Stderr, "caches probe:", err)
		return statusFailed
	}
	refused := make([]string, len(overlays))
	for i, o := range overlays {
		if err := child.MountOverlay(o); err != nil {
			refused[i] = err.Error()
		}
	}
	json.NewEncoder(os.Stdout).Encode(refused)
	return statusOK
}
