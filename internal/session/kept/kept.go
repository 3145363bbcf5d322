// Package kept holds the answers exec keeps across sessions
// (docs/design.md §10): the toolchains' cache folders
// (internal/session/toolchains) and the probes' verdicts (the
// supervisor's probe.go). Each kind is one file in the runtime folder
// of the session records (wire.RuntimeBase), where no session can
// write, each answer under the key of everything it depends on, checked
// before use; a file that cannot be trusted is ignored and replaced. It
// knows no policy: what a key means is its caller's.
//
// The file is read at every start, so a start decodes only the answers
// it looks up: a first line names the kind and its format's version,
// then each answer is one line, the latest kept first: the SHA-256 of
// its key in hex (keyID), a space, and the answer in JSON, whose own
// key must be the one looked up.
package kept

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/dshfs/dsh-fs/internal/trust"
)

// maxBytes bounds what is read of a file of kept answers.
const maxBytes = 1 << 20

// Kind is one kind of kept answer: the name of its file in the runtime
// folder (its lock is Name+".lock" beside it), its format's version
// (a file of another is ignored), how many answers it keeps (the latest
// used first), the key of an answer, and the check an answer must pass
// to be used (none where Valid is nil).
type Kind[A any] struct {
	Name    string
	Version int
	Max     int
	Key     func(A) string
	Valid   func(A) bool
}

// entry is one answer of a file: the id of its key (keyID) and the
// answer, in JSON, not decoded.
type entry struct {
	id     string
	answer []byte
}

// keyID is the id of key in a file of kept answers.
func keyID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// header is the first line of k's file.
func (k Kind[A]) header() string {
	return "dsh-fs kept " + k.Name + " " + strconv.Itoa(k.Version)
}

// File is a file of kept answers whose first line was its kind's
// header: its answers' lines, undecoded.
type File []byte

// Read reads the file of kept answers in base: a file that is not this
// user's, readable or writable by others, a symlink, not a regular
// file, too large, or without its kind's header is ignored; a runtime
// folder that cannot be trusted is not read.
func (k Kind[A]) Read(base string) (File, bool) {
	if checkBase(base) != nil {
		return nil, false
	}
	fd, size, ok := openPrivate(filepath.Join(base, k.Name))
	if !ok {
		return nil, false
	}
	defer fd.Close()
	// One buffer of the file's size: the file is read at every start,
	// and a growing buffer's copies were most of its cost.
	data := make([]byte, size)
	if _, err := io.ReadFull(fd, data); err != nil {
		return nil, false
	}
	head, rest, found := bytes.Cut(data, []byte("\n"))
	if !found || string(head) != k.header() {
		return nil, false
	}
	return File(rest), true
}

// answer is the answer under id in f, undecoded, or nil: found by
// looking at each line's id in place, with nothing allocated, since a
// start looks up one or two answers of up to hundreds.
func (f File) answer(id string) []byte {
	for rest := []byte(f); len(rest) > 0; {
		line, after, found := bytes.Cut(rest, []byte("\n"))
		if !found {
			return nil // the last line ends too
		}
		if len(line) > len(id)+1 && line[len(id)] == ' ' && string(line[:len(id)]) == id {
			return line[len(id)+1:]
		}
		rest = after
	}
	return nil
}

// lines splits f into its lines; ok is false where it is not the
// format.
func (f File) lines() (lines []entry, ok bool) {
	for rest := []byte(f); len(rest) > 0; {
		var line []byte
		var found bool
		if line, rest, found = bytes.Cut(rest, []byte("\n")); !found {
			return nil, false // the last line ends too
		}
		id, answer, found := bytes.Cut(line, []byte(" "))
		if !found || len(id) != sha256.Size*2 || !isLowerHex(id) || len(answer) == 0 {
			return nil, false
		}
		lines = append(lines, entry{id: string(id), answer: answer})
	}
	return lines, true
}

// isLowerHex says whether b is lower-case hex digits only.
func isLowerHex(b []byte) bool {
	return !slices.ContainsFunc(b, func(c byte) bool { return (c < '0' || c > '9') && (c < 'a' || c > 'f') })
}

// Find is the answer under key in f, decoded: one whose JSON is not an
// answer, is under another key, or fails Valid is none.
func (k Kind[A]) Find(f File, key string) (A, bool) {
	var a, zero A
	data := f.answer(keyID(key))
	if data == nil || json.Unmarshal(data, &a) != nil || k.Key(a) != key || k.Valid != nil && !k.Valid(a) {
		return zero, false
	}
	return a, true
}

// Lookup is the answer kept in base under key.
func (k Kind[A]) Lookup(base, key string) (A, bool) {
	f, ok := k.Read(base)
	if !ok {
		var zero A
		return zero, false
	}
	return k.Find(f, key)
}

// encode is the content of k's file with lines.
func (k Kind[A]) encode(lines []entry) []byte {
	b := []byte(k.header() + "\n")
	for _, l := range lines {
		b = append(append(append(append(b, l.id...), ' '), l.answer...), '\n')
	}
	return b
}

// line is answer a as a line of k's file.
func (k Kind[A]) line(a A) (entry, error) {
	data, err := json.Marshal(a) // one line: JSON escapes a newline in a string
	return entry{id: keyID(k.Key(a)), answer: data}, err
}

// Keep adds a to the file of kept answers in base, first, replacing the
// answer under its key, under a lock, by a whole new file renamed over
// the old one. It makes base (0700) where it is missing and the folder
// above it is trusted. Failing, it leaves the file as it was: the answer
// is only not kept.
func (k Kind[A]) Keep(base string, a A) error {
	l, err := k.line(a)
	if err != nil {
		return err
	}
	return k.update(base, func(ls []entry) []entry {
		ls = slices.DeleteFunc(ls, func(o entry) bool { return o.id == l.id })
		return append([]entry{l}, ls...)
	})
}

// Forget removes the answers under keys from the file in base.
func (k Kind[A]) Forget(base string, keys ...string) error {
	ids := make([]string, len(keys))
	for i, key := range keys {
		ids[i] = keyID(key)
	}
	return k.update(base, func(ls []entry) []entry {
		return slices.DeleteFunc(ls, func(o entry) bool { return slices.Contains(ids, o.id) })
	})
}

// update rewrites the file of kept answers in base with change's lines.
func (k Kind[A]) update(base string, change func([]entry) []entry) error {
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := checkBase(base); err != nil {
		return err
	}
	lock, err := lockFile(filepath.Join(base, k.Name+".lock"))
	if err != nil {
		return err
	}
	defer lock.Close()
	var lines []entry
	if f, ok := k.Read(base); ok {
		lines, _ = f.lines()
	}
	lines = change(lines)
	lines = lines[:min(len(lines), k.Max)]
	tmp, err := os.CreateTemp(base, "."+k.Name+"-*") // 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(k.encode(lines))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(base, k.Name))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("keeping the %s answer: %w", k.Name, err)
	}
	return nil
}

// checkBase checks the runtime folder base and every folder above it:
// owned by root or this user, writable by no one else.
func checkBase(base string) error { return trust.CheckTrustedFolders(base, false) }
