//go:build unix

package wire

import (
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
)

// lockRuntime takes the exclusive lock of the runtime folder base and
// returns its release; where it cannot be taken, nothing is locked.
func lockRuntime(base string) func() {
	f, err := os.Open(base)
	if err != nil {
		return func() {}
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX) != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() }
}

// adoptLive records in m the placeholders of live, other sessions' still
// running, that m's plan needs to stay while it runs, each while it is
// still the one made: one it binds read-only, and a folder above one,
// which the plan pins (every folder above a read-only path in a root is
// a mount of the session's). Recorded, none is removed by its maker's
// end while this session runs (End), and this session's end removes
// what no other needs.
func adoptLive(m *layout.MountPlan, live []layout.Placeholder) {
	needed := func(h layout.Placeholder) bool {
		return slices.ContainsFunc(m.ReadOnly, func(p string) bool { return p == h.Path || h.Dir && sandbox.Beneath(h.Path, p) })
	}
	adopted := false
	for _, h := range live {
		if !needed(h) || slices.ContainsFunc(m.Placeholders, func(o layout.Placeholder) bool { return o.Path == h.Path }) {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(h.Path, &st) == nil && uint64(st.Dev) == h.Dev && uint64(st.Ino) == h.Ino {
			m.Placeholders, adopted = append(m.Placeholders, h), true
		}
	}
	if adopted {
		// Folders before what they hold: removal goes last first.
		slices.SortStableFunc(m.Placeholders, func(a, b layout.Placeholder) int { return strings.Compare(a.Path, b.Path) })
	}
}
