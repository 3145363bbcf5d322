package shell

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// Answers exec keeps across sessions (docs/design.md §10): the
// toolchains' cache folders (toolchains.go) and the probes' verdicts
// (probes.go). Each kind is one file in the runtime folder of the
// session records (session.RuntimeBase), where no session can write,
// each answer under the key of everything it depends on, checked before
// use; a file that cannot be trusted is ignored and replaced.

// keptMaxBytes bounds what is read of a file of kept answers.
const keptMaxBytes = 1 << 20

// keptFile is the content of a file of kept answers.
type keptFile[A any] struct {
	Version int `json:"version"`
	Answers []A `json:"answers"`
}

// keptKind is one kind of kept answer: its file and lock in the runtime
// folder, its format's version (another is ignored), how many answers
// it keeps (the latest used first), the key of an answer, and the check
// every answer read must pass for the file to be used.
type keptKind[A any] struct {
	name, lock string
	version    int
	max        int
	key        func(A) string
	valid      func(A) bool
}

// read reads and checks the file of kept answers in base: a file that is
// not this user's, readable or writable by others, a symlink, not a
// regular file, too large, not the format, or with an answer that fails
// valid is ignored; a runtime folder that cannot be trusted is not read.
func (k keptKind[A]) read(base string) (keptFile[A], bool) {
	var f keptFile[A]
	if checkTrustedBase(base) != nil {
		return f, false
	}
	fd, err := os.OpenFile(filepath.Join(base, k.name), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return f, false
	}
	defer fd.Close()
	var st unix.Stat_t
	if unix.Fstat(int(fd.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() ||
		st.Mode&0o077 != 0 || st.Size > keptMaxBytes {
		return f, false
	}
	data, err := io.ReadAll(io.LimitReader(fd, keptMaxBytes))
	if err != nil {
		return f, false
	}
	if json.Unmarshal(data, &f) != nil || f.Version != k.version {
		return keptFile[A]{}, false
	}
	if k.valid != nil && slices.ContainsFunc(f.Answers, func(a A) bool { return !k.valid(a) }) {
		return keptFile[A]{}, false
	}
	return f, true
}

// lookup is the answer kept in base under key.
func (k keptKind[A]) lookup(base, key string) (A, bool) {
	var zero A
	f, ok := k.read(base)
	if !ok {
		return zero, false
	}
	i := slices.IndexFunc(f.Answers, func(a A) bool { return k.key(a) == key })
	if i < 0 {
		return zero, false
	}
	return f.Answers[i], true
}

// keep adds a to the file of kept answers in base, first, replacing the
// answer under its key, under a lock, by a whole new file renamed over
// the old one. It makes base (0700) where it is missing and the folder
// above it is trusted. Failing, it leaves the file as it was: the answer
// is only not kept.
func (k keptKind[A]) keep(base string, a A) error {
	key := k.key(a)
	return k.update(base, func(as []A) []A {
		as = slices.DeleteFunc(as, func(o A) bool { return k.key(o) == key })
		return append([]A{a}, as...)
	})
}

// forget removes the answers under keys from the file in base.
func (k keptKind[A]) forget(base string, keys ...string) error {
	return k.update(base, func(as []A) []A {
		return slices.DeleteFunc(as, func(o A) bool { return slices.Contains(keys, k.key(o)) })
	})
}

// update rewrites the file of kept answers in base with change's answers.
func (k keptKind[A]) update(base string, change func([]A) []A) error {
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
	f, _ := k.read(base)
	f.Version = k.version
	f.Answers = change(f.Answers)
	f.Answers = f.Answers[:min(len(f.Answers), k.max)]
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(base, "."+k.name+"-*") // 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
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
