package toolchains

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// toolchainsFixture is a trusted runtime folder (under /run, as the real
// one is: /tmp is writable by others) and a $PATH with a fake go that
// counts its runs in a file.
type toolchainsFixture struct {
	base, bin, count string
	env              []string
}

func newToolchainsFixture(t *testing.T) toolchainsFixture {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: a trusted runtime folder is made under /run")
	}
	run, err := os.MkdirTemp("/run", "dsh-fs-toolchainstest-")
	if err != nil {
		t.Skipf("cannot make a folder in /run: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	f := toolchainsFixture{base: filepath.Join(run, "dsh-fs"), bin: t.TempDir()}
	f.count = filepath.Join(f.bin, "count")
	f.writeGo(t, "/go/cache")
	f.env = []string{"PATH=" + f.bin, "HOME=" + t.TempDir()}
	return f
}

// writeGo makes the fake go, which names cache as GOCACHE.
func (f toolchainsFixture) writeGo(t *testing.T, cache string) {
	t.Helper()
	script := "#!/bin/sh\necho run >>" + f.count + "\necho " + cache + "\necho /go/mod\n"
	if err := os.WriteFile(filepath.Join(f.bin, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// runs is how many times go was run.
func (f toolchainsFixture) runs() int {
	data, _ := os.ReadFile(f.count)
	return strings.Count(string(data), "run\n")
}

// idOf is the id of key in a file of kept answers: the SHA-256 of the
// key, in hex.
func idOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func gocache(found []Cache) string {
	for _, c := range found {
		if c.Source == "go env GOCACHE" {
			return c.Path
		}
	}
	return ""
}

// TestFind: the toolchains are asked once; a changed binary
// or variable asks again; the file is private and atomically replaced.
func TestFind(t *testing.T) {
	f := newToolchainsFixture(t)
	steps := []struct {
		what string
		env  func() []string
		runs int
		want string
	}{
		{"first", func() []string { return f.env }, 1, "/go/cache"},
		{"second, kept", func() []string { return f.env }, 1, "/go/cache"},
		{"a variable changed", func() []string { return append(f.env, "GOFLAGS=-v") }, 2, "/go/cache"},
		{"the first again, kept", func() []string { return f.env }, 2, "/go/cache"},
		{"the binary replaced", func() []string { f.writeGo(t, "/go/other"); return f.env }, 3, "/go/other"},
		{"kept again", func() []string { return f.env }, 3, "/go/other"},
	}
	for _, s := range steps {
		got := gocache(Find(f.base, s.env()))
		if f.runs() != s.runs || got != s.want {
			t.Errorf("%s: go ran %d times, GOCACHE %q; want %d, %q", s.what, f.runs(), got, s.runs, s.want)
		}
	}
	fi, err := os.Lstat(filepath.Join(f.base, keptName))
	if err != nil || fi.Mode() != 0o600 {
		t.Errorf("the kept answers: %v, %v; want a regular file, mode 0600", fi, err)
	}
	if left, _ := filepath.Glob(filepath.Join(f.base, "."+keptName+"-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestFindUntrusted: a planted file of kept answers naming a
// folder of the planter's choice is used only when it is this user's,
// private and well formed; every other is ignored (the toolchain asked)
// and replaced.
func TestFindUntrusted(t *testing.T) {
	f := newToolchainsFixture(t)
	path := filepath.Join(f.base, keptName)
	// keptFile is the file of kept answers that holds a alone, as Keep
	// writes it.
	keptFile := func(a answer) []byte {
		t.Helper()
		os.Remove(path)
		if err := keptAnswers.Keep(f.base, a); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	planted := []Cache{{Path: "/planted", Source: "go env GOCACHE"}}
	good := keptFile(answer{Key: keyOf(f.env), Found: planted})
	cases := []struct {
		what  string
		plant func() error
	}{
		{"readable by others", func() error { return os.WriteFile(path, good, 0o644) }},
		{"another user's", func() error {
			if err := os.WriteFile(path, good, 0o600); err != nil {
				return err
			}
			return os.Chown(path, 65534, 65534)
		}},
		{"garbage", func() error { return os.WriteFile(path, []byte("{\"version\":1,\"answers\":[{"), 0o600) }},
		{"an answer cut short", func() error { return os.WriteFile(path, good[:len(good)-5], 0o600) }},
		{"another version", func() error {
			return os.WriteFile(path, []byte(strings.Replace(string(good), " 1\n", " 2\n", 1)), 0o600)
		}},
		{"another key's answer under this key's id", func() error {
			other := keptFile(answer{Key: "another key", Found: planted})
			if !bytes.Contains(other, []byte(idOf("another key"))) {
				return errors.New("the file does not hold the other key's id")
			}
			other = bytes.Replace(other, []byte(idOf("another key")), []byte(idOf(keyOf(f.env))), 1)
			return os.WriteFile(path, other, 0o600)
		}},
		{"a relative path", func() error {
			return os.WriteFile(path, []byte(strings.Replace(string(good), "/planted", "planted", 1)), 0o600)
		}},
		{"a symlink to a private file", func() error {
			other := filepath.Join(f.base, "other")
			if err := os.WriteFile(other, good, 0o600); err != nil {
				return err
			}
			return os.Symlink(other, path)
		}},
	}
	for i, c := range cases {
		os.Remove(path)
		if err := c.plant(); err != nil {
			t.Fatalf("%s: %v", c.what, err)
		}
		got := gocache(Find(f.base, f.env))
		if got != "/go/cache" || f.runs() != i+1 {
			t.Errorf("%s: GOCACHE %q after %d runs of go; want the toolchain asked (/go/cache, %d runs)", c.what, got, f.runs(), i+1)
		}
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: not replaced by a private file: %v, %v", c.what, fi, err)
		}
	}
	// The control: the same answer, this user's and private, is used.
	os.Remove(path)
	os.WriteFile(path, good, 0o600)
	if got := gocache(Find(f.base, f.env)); got != "/planted" || f.runs() != len(cases) {
		t.Errorf("a trusted file: GOCACHE %q after %d runs; want /planted, %d runs", got, f.runs(), len(cases))
	}
	// A runtime folder others may write: neither read nor written.
	os.Chmod(f.base, 0o777)
	if got := gocache(Find(f.base, f.env)); got != "/go/cache" || f.runs() != len(cases)+1 {
		t.Errorf("an untrusted folder: GOCACHE %q after %d runs", got, f.runs())
	}
}
