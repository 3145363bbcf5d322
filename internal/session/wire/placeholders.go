package wire

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
)

// Sessions on one root share the placeholders of its protected paths
// (layout.Placeholder): the first makes them, the others adopt them,
// and the last to end removes them. Each step runs under the runtime
// folder's lock, so no session removes a placeholder between another's
// plan and its record.

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

// WriteWithPlaceholders writes r as the record of the session folder dir
// (Write), after readying the placeholders of its mount plan, all under
// the runtime folder's lock: ready makes them (layout.MakePlaceholders),
// and a placeholder of another session still running that r's plan
// needs is adopted (adoptLive).
func WriteWithPlaceholders(dir string, r *Record, ready func(*layout.MountPlan) error) (string, error) {
	defer lockRuntime(filepath.Dir(dir))()
	if m := r.Shell.Mounts; m != nil {
		if err := ready(m); err != nil {
			removePlaceholders(dir, m.Placeholders)
			return "", err
		}
		adoptLive(m, livePlaceholders(dir))
	}
	return Write(dir, r)
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

// End removes the session folder dir (Remove) and the placeholders hs of
// its session that no other session still running has adopted, under
// the runtime folder's lock.
func End(dir string, hs []layout.Placeholder) error {
	defer lockRuntime(filepath.Dir(dir))()
	removePlaceholders(dir, hs)
	return Remove(dir)
}

// removePlaceholders removes the placeholders hs of the session folder
// dir (layout.RemovePlaceholders) but those another session still
// running names; the caller holds the lock.
func removePlaceholders(dir string, hs []layout.Placeholder) {
	removePlaceholdersBut(hs, livePlaceholders(dir))
}

// removePlaceholdersBut removes the placeholders hs but those of live.
func removePlaceholdersBut(hs, live []layout.Placeholder) {
	inUse := map[[2]uint64]bool{}
	for _, h := range live {
		inUse[[2]uint64{h.Dev, h.Ino}] = true
	}
	var mine []layout.Placeholder
	for _, h := range hs {
		if !inUse[[2]uint64{h.Dev, h.Ino}] {
			mine = append(mine, h)
		}
	}
	layout.RemovePlaceholders(mine)
}

// livePlaceholders are the recorded placeholders of the sessions of
// dir's runtime folder, but dir's own, whose supervisor still runs.
func livePlaceholders(dir string) []layout.Placeholder {
	var out []layout.Placeholder
	others, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "session-*"))
	for _, d := range others {
		if d == dir {
			continue
		}
		data, err := os.ReadFile(RecordPath(d))
		var r Record
		if err != nil || json.Unmarshal(data, &r) != nil || r.supervisorGone() {
			continue
		}
		out = append(out, recordedPlaceholders(&r)...)
	}
	return out
}
