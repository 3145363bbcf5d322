package supervisor

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

	"golang.org/x/sys/unix"
)

// Answers exec keeps across sessions (docs/design.md §10): the
// toolchains' cache folders (toolchains.go) and the probes' verdicts
// (probes.go). Each kind is one file in the runtime folder of the
// session records (session.RuntimeBase), where no session can write,
// each answer under the key of everything it depends on, checked before
// use; a file that cannot be trusted is ignored and replaced.
//
// The file is read at every start, so a start decodes only the answers
// it looks up: a first line names the kind and its format's version,
// then each answer is one line, the latest kept first: the SHA-256 of
// its key in hex (keptID), a space, and the answer in JSON, whose own
// key must be the one looked up.

// keptMaxBytes bounds what is read of a file of kept answers.
const keptMaxBytes = 1 << 20

// keptKind is one kind of kept answer: its file and lock in the runtime
// folder, its format's version (another is ignored), how many answers
// it keeps (the latest used first), the key of an answer, and the check
// an answer must pass to be used.
type keptKind[A any] struct {
	name, lock string
	version    int
	max        int
	key        func(A) string
	valid      func(A) bool
}

// keptLine is one answer of a file: the id of its key (keptID) and the
// answer, in JSON, not decoded.
type keptLine struct {
	id     string
	answer []byte
}

// keptID is the id of key in a file of kept answers.
func keptID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// header is the first line of k's file.
func (k keptKind[A]) header() string {
	return "dsh-fs kept " + k.name + " " + strconv.Itoa(k.version)
}

// keptFile is a file of kept answers whose first line was its kind's
// header: its answers' lines, undecoded.
type keptFile []byte

// read reads the file of kept answers in base: a file that is not this
// user's, readable or writable by others, a symlink, not a regular
// file, too large, or without its kind's header is ignored; a runtime
// folder that cannot be trusted is not read.
func (k keptKind[A]) read(base string) (keptFile, bool) {
	if checkTrustedBase(base) != nil {
		return nil, false
	}
	fd, err := os.OpenFile(filepath.Join(base, k.name), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer fd.Close()
	var st unix.Stat_t
	if unix.Fstat(int(fd.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() ||
		st.Mode&0o077 != 0 || st.Size > keptMaxBytes {
		return nil, false
	}
	// One buffer of the file's size: the file is read at every start,
	// and a growing buffer's copies were most of its cost.
	data := make([]byte, st.Size)
	if _, err := io.ReadFull(fd, data); err != nil {
		return nil, false
	}
	head, rest, found := bytes.Cut(data, []byte("\n"))
	if !found || string(head) != k.header() {
		return nil, false
	}
	return keptFile(rest), true
}

// answer is the answer under id in f, undecoded, or nil: found by
// looking at each line's id in place, with nothing allocated, since a
// start looks up one or two answers of up to hundreds.
func (f keptFile) answer(id string) []byte {
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
func (f keptFile) lines() (lines []keptLine, ok bool) {
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
		lines = append(lines, keptLine{id: string(id), answer: answer})
	}
	return lines, true
}

// isLowerHex says whether b is lower-case hex digits only.
func isLowerHex(b []byte) bool {
	return !slices.ContainsFunc(b, func(c byte) bool { return (c < '0' || c > '9') && (c < 'a' || c > 'f') })
}

// find is the answer under key in f, decoded: one whose JSON is not an
// answer, is under another key, or fails valid is none.
func (k keptKind[A]) find(f keptFile, key string) (A, bool) {
	var a, zero A
	data := f.answer(keptID(key))
	if data == nil || json.Unmarshal(data, &a) != nil || k.key(a) != key || k.valid != nil && !k.valid(a) {
		return zero, false
	}
	return a, true
}

// lookup is the answer kept in base under key.
func (k keptKind[A]) lookup(base, key string) (A, bool) {
	f, ok := k.read(base)
	if !ok {
		var zero A
		return zero, false
	}
	return k.find(f, key)
}

// encode is the content of k's file with lines.
func (k keptKind[A]) encode(lines []keptLine) []byte {
	b := []byte(k.header() + "\n")
	for _, l := range lines {
		b = append(append(append(append(b, l.id...), ' '), l.answer...), '\n')
	}
	return b
}

// line is answer a as a line of k's file.
func (k keptKind[A]) line(a A) (keptLine, error) {
	data, err := json.Marshal(a) // one line: JSON escapes a newline in a string
	return keptLine{id: keptID(k.key(a)), answer: data}, err
}

// keep adds a to the file of kept answers in base, first, replacing the
// answer under its key, under a lock, by a whole new file renamed over
// the old one. It makes base (0700) where it is missing and the folder
// above it is trusted. Failing, it leaves the file as it was: the answer
// is only not kept.
func (k keptKind[A]) keep(base string, a A) error {
	l, err := k.line(a)
	if err != nil {
		return err
	}
	return k.update(base, func(ls []keptLine) []keptLine {
		ls = slices.DeleteFunc(ls, func(o keptLine) bool { return o.id == l.id })
		return append([]keptLine{l}, ls...)
	})
}

// forget removes the answers under keys from the file in base.
func (k keptKind[A]) forget(base string, keys ...string) error {
	ids := make([]string, len(keys))
	for i, key := range keys {
		ids[i] = keptID(key)
	}
	return k.update(base, func(ls []keptLine) []keptLine {
		return slices.DeleteFunc(ls, func(o keptLine) bool { return slices.Contains(ids, o.id) })
	})
}

// update rewrites the file of kept answers in base with change's lines.
func (k keptKind[A]) update(base string, change func([]keptLine) []keptLine) error {
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := checkTrustedBase(base); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(base, k.lock), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	var lines []keptLine
	if f, ok := k.read(base); ok {
		lines, _ = f.lines()
	}
	lines = change(lines)
	lines = lines[:min(len(lines), k.max)]
	tmp, err := os.CreateTemp(base, "."+k.name+"-*") // 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(k.encode(lines))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(base, k.name))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("keeping the %s answer: %w", k.name, err)
	}
	return nil
}
