package wire

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/dshfs/dsh-fs/internal/session/layout"
)

// Sessions on one root share the placeholders of its protected paths
// (layout.Placeholder): the first makes them, the others adopt them,
// and the last to end removes them. Each step runs under the runtime
// folder's lock, so no session removes a placeholder between another's
// plan and its record.

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
