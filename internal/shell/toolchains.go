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

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
)

// The toolchains' answers, kept (docs/design.md §10, "Toolchain
// caches"). Asking go, npm and pip where their caches are costs every
// session's start tens of milliseconds; the answer changes only when a
// toolchain, a variable or a config file that can move a cache does. So
// the answers are kept in the runtime folder of the session records
// (session.RuntimeBase), where no session can write, each under the key
// of what it depends on (sandbox.ToolchainsKey), and a start whose key
// is kept asks nothing.

// toolchainsName is the file of the kept answers in the runtime folder;
// toolchainsLock serializes its updates.
const (
	toolchainsName = "toolchains"
	toolchainsLock = "toolchains.lock"
)

// toolchainsVersion is the format of the file; another is ignored.
const toolchainsVersion = 1

// toolchainsMax is how many answers the file keeps, the latest used
// first: a person's few environments, and the tests'.
const toolchainsMax = 64

// toolchainsMaxBytes bounds what is read of the file.
const toolchainsMaxBytes = 1 << 20

// toolchainsFile is the file's content.
type toolchainsFile struct {
	Version int               `json:"version"`
	Answers []toolchainAnswer `json:"answers"`
}

// toolchainAnswer is FindCaches's complete answer for one key.
type toolchainAnswer struct {
	Key   string               `json:"key"`
	Found []sandbox.FoundCache `json:"found"`
}

// findCachesKept is FindCaches's answer for env, from the file of kept
// answers in base where it holds one for env's key; else the toolchains
// are asked, and a complete answer is kept. A file that cannot be
// trusted (not this user's, readable or writable by others, a symlink,
// not a regular file, too large, not the format) is ignored, and
// replaced by the next answer kept; a runtime folder that cannot be
// trusted is neither read nor written.
func findCachesKept(base string, env []string) []sandbox.FoundCache {
	key := sandbox.ToolchainsKey(env)
	if f, ok := readToolchains(base); ok {
		if i := slices.IndexFunc(f.Answers, func(a toolchainAnswer) bool { return a.Key == key }); i >= 0 {
			return f.Answers[i].Found
		}
	}
	found, complete := sandbox.FindCaches(env)
	if complete {
		keepToolchains(base, toolchainAnswer{Key: key, Found: found})
	}
	return found
}

// readToolchains reads and checks the file of kept answers in base.
func readToolchains(base string) (toolchainsFile, bool) {
	var f toolchainsFile
	if sandbox.CheckTrustedFolders(base, false) != nil {
		return f, false
	}
	fd, err := os.OpenFile(filepath.Join(base, toolchainsName), os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return f, false
	}
	defer fd.Close()
	var st unix.Stat_t
	if unix.Fstat(int(fd.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() ||
		st.Mode&0o077 != 0 || st.Size > toolchainsMaxBytes {
		return f, false
	}
	data, err := io.ReadAll(io.LimitReader(fd, toolchainsMaxBytes))
	if err != nil {
		return f, false
	}
	if json.Unmarshal(data, &f) != nil || f.Version != toolchainsVersion {
		return toolchainsFile{}, false
	}
	for _, a := range f.Answers {
		for _, c := range a.Found {
			if !filepath.IsAbs(c.Path) {
				return toolchainsFile{}, false
			}
		}
	}
	return f, true
}

// keepToolchains adds a to the file of kept answers in base, first,
// under a lock, by a whole new file renamed over the old one. It makes
// base (0700) where it is missing and the folder above it is trusted.
// Failing, it leaves the file as it was: the answer is only not kept.
func keepToolchains(base string, a toolchainAnswer) error {
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := sandbox.CheckTrustedFolders(base, false); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(base, toolchainsLock), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return err
	}
	f, _ := readToolchains(base)
	f.Version = toolchainsVersion
	f.Answers = slices.DeleteFunc(f.Answers, func(o toolchainAnswer) bool { return o.Key == a.Key })
	f.Answers = append([]toolchainAnswer{a}, f.Answers...)
	f.Answers = f.Answers[:min(len(f.Answers), toolchainsMax)]
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(base, ".toolchains-*") // 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(base, toolchainsName))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("keeping the toolchains' answer: %w", err)
	}
	return nil
}

// toolchainsBase is the folder of the kept answers: the runtime folder
// of the session records.
func toolchainsBase() string { return session.RuntimeBase() }
