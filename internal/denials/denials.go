// Package denials keeps an exec session's log of what was refused, for
// the model (docs/design.md §10, "A denial in the shell explains itself"):
// each entry names the path or host, the operation, the layer and rule
// that refused it, and whether an escalation could lift it; the same
// denial again is the same entry with its count raised. The supervisor
// writes it (Log.Add), in a folder beside the session's record that the
// session sees read-only; `dsh-fs denials` inside reads it (Read).
//
// The log is the model's, never the person's: nothing in it is shown on
// an approval screen or decides anything. It is bounded (MaxEntries
// entries, each field cut at MaxField bytes, the file at most MaxBytes).
package denials

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// Folder is the name of the log's folder in a session's folder, beside
// the record: the mount layer binds it read-only into the session's view
// of the runtime folder.
const Folder = policy.DenialsFolder

// file is the log's name in Folder.
const file = "log.json"

// The log's bounds: a session that is refused in a loop grows counts,
// not the file.
const (
	MaxEntries = 64
	MaxField   = 512
	MaxBytes   = 64 << 10
)

// The layers an entry names.
const (
	// LayerProxy is the session's network proxy (network: allowlist).
	LayerProxy = "proxy"
	// LayerBroker is the supervisor's broker of escalations.
	LayerBroker = "broker"
	// LayerShell is a refusal a command in the shell printed, which
	// the supervisor read in the session's output and the policy
	// explains (docs/design.md §10).
	LayerShell = "shell"
)

// Entry is one denial and how often it happened. Entries are equal, and
// counted as one, when their layer, op, path, host and rule are.
type Entry struct {
	Layer string `json:"layer"`
	Op    string `json:"op"`
	Path  string `json:"path,omitempty"`
	// Printed is the path as the command printed it, and Base the
	// folder a relative one was taken from (LayerShell).
	Printed string `json:"printed,omitempty"`
	Base    string `json:"base,omitempty"`
	// Error is the error the command printed (LayerShell).
	Error string `json:"error,omitempty"`
	Host  string `json:"host,omitempty"`
	Rule  string `json:"rule"`
	// Escalation says whether an escalation could lift the denial, and
	// how; "no" when none can.
	Escalation string `json:"escalation"`
	// WayForward is what lifts it for good: the trusted setting a
	// person would change.
	WayForward string `json:"way_forward,omitempty"`
	Count      int    `json:"count"`
	First      string `json:"first"`
	Last       string `json:"last"`
}

func (e Entry) key() [5]string { return [5]string{e.Layer, e.Op, e.Path, e.Host, e.Rule} }

// File is the log as written: its entries in the order they first
// happened, and how many distinct denials did not fit.
type File struct {
	Entries []Entry `json:"entries"`
	Dropped int     `json:"dropped"`
}

// Log is a session's log, kept by its supervisor. A nil *Log keeps
// nothing, so a hook at an event site is one call.
type Log struct {
	mu       sync.Mutex
	dir      string
	approval string
	f        File
	now      func() time.Time
	errs     int
}

// Open makes the log's folder in the session folder dir (mode 0700) and
// returns the empty log, written at once so a reader finds it. approval
// is the session's trusted approval, which says whether asking again
// could lift a refused escalation (Log.Brokered).
func Open(dir, approval string) (*Log, error) {
	d := filepath.Join(dir, Folder)
	if err := os.Mkdir(d, 0o700); err != nil {
		return nil, err
	}
	l := &Log{dir: d, approval: approval, f: File{Entries: []Entry{}}, now: time.Now}
	if err := l.write(); err != nil {
		return nil, err
	}
	return l, nil
}

// Add records e: a new entry, or the count of an equal one raised. Each
// field is cut at MaxField bytes and made valid UTF-8; past MaxEntries,
// or MaxBytes of file, a new denial is only counted in Dropped. A write
// that fails leaves the log as it was on disk; the next Add tries again.
func (l *Log) Add(e Entry) {
	if l == nil {
		return
	}
	for _, s := range []*string{&e.Layer, &e.Op, &e.Path, &e.Printed, &e.Base, &e.Error, &e.Host, &e.Rule, &e.Escalation, &e.WayForward} {
		*s = clip(*s)
	}
	now := l.now().UTC().Format(time.RFC3339)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.f.Entries {
		if l.f.Entries[i].key() == e.key() {
			l.f.Entries[i].Count++
			l.f.Entries[i].Last = now
			l.flush()
			return
		}
	}
	if len(l.f.Entries) >= MaxEntries {
		l.f.Dropped++
		l.flush()
		return
	}
	e.Count, e.First, e.Last = 1, now, now
	l.f.Entries = append(l.f.Entries, e)
	// Room is kept for the counts to grow in (a few digits per entry).
	if data, _ := json.Marshal(l.f); len(data) > MaxBytes-4096 {
		l.f.Entries = l.f.Entries[:len(l.f.Entries)-1]
		l.f.Dropped++
	}
	l.flush()
}

// Brokered records the refusal of the escalated call req, which exited
// with status and printed stdout, if it was one (see Brokered).
func (l *Log) Brokered(req wire.Request, status int, stdout string) {
	if l == nil {
		return
	}
	if e, ok := Brokered(req, status, []byte(stdout), l.approval); ok {
		l.Add(e)
	}
}

func (l *Log) flush() {
	if err := l.write(); err != nil {
		l.errs++
	}
}

// write puts the log in its folder whole: a temporary file renamed over
// the last, so a reader sees one or the other, never a part.
func (l *Log) write() error {
	data, err := json.Marshal(l.f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(l.dir, ".log-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o400)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), filepath.Join(l.dir, file)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// clip cuts s at MaxField bytes on a character boundary and replaces what
// is not UTF-8.
func clip(s string) string {
	if !utf8.ValidString(s) {
		s = string([]rune(s))
	}
	if len(s) <= MaxField {
		return s
	}
	cut := MaxField - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// Read reads the log of the session whose record is at record (a record
// wire.Read trusted): the file beside it, which must be a regular
// file, not a symlink, owned by root or by this user (trusted says so of
// a uid) and writable by nobody, no larger than MaxBytes. A session whose
// supervisor wrote no log (an older dsh-fs) reads as an empty one.
func Read(record string, trusted func(uid uint32) bool) (File, error) {
	path := filepath.Join(filepath.Dir(record), Folder, file)
	f, err := os.OpenFile(path, readFlags, 0)
	if errors.Is(err, os.ErrNotExist) {
		return File{Entries: []Entry{}}, nil
	}
	if err != nil {
		return File{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return File{}, err
	}
	uid, ok := ownerUID(fi)
	switch {
	case !fi.Mode().IsRegular() || !ok:
		return File{}, fmt.Errorf("%s is not a regular file", path)
	case !trusted(uid):
		return File{}, fmt.Errorf("%s is owned by uid %d, neither root nor this user", path, uid)
	case fi.Mode().Perm()&0o222 != 0:
		return File{}, fmt.Errorf("%s may be written (mode %04o)", path, fi.Mode().Perm())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return File{}, err
	}
	if len(data) > MaxBytes {
		return File{}, fmt.Errorf("%s is larger than a denial log (%d bytes)", path, MaxBytes)
	}
	var out File
	if err := json.Unmarshal(data, &out); err != nil {
		return File{}, fmt.Errorf("%s is not a denial log: %w", path, err)
	}
	if out.Entries == nil {
		out.Entries = []Entry{}
	}
	return out, nil
}
