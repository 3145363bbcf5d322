//go:build unix

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// The fuzz vocabulary. "$WS" is the workspace's absolute path, "$OUT" the
// outside folder's, both fresh for every input.
var (
	// fuzzNames are where tree entries go, inside ws.
	fuzzNames = []string{"a", "b", "in", "a/b", "a/c", "link1", "link2", "a/link1", "b/link2", "a/b/link1", "in/x", "c"}
	// fuzzTargets are what symlinks point to.
	fuzzTargets = []string{
		"..", "../..", "/", "$OUT", "in", "a/b", "$WS", "a", "link1", "link2", "missing",
		"$OUT/sub", ".", "../ws_evil", "$WS_evil", "b/../..", "../out/x", "in/x", "$WS/a", "f", "link1/..", "../../..",
	}
	// fuzzComps are the components of the path to check.
	fuzzComps = []string{
		"a", "b", "link1", "link2", "..", ".", "", "in", "c", "x", "missing", "f",
		"$WS", "$OUT", "/proc/self/root$WS", "sub",
	}
)

const (
	fuzzMaxEntries = 10
	fuzzMaxComps   = 16
)

// fuzzTree encodes tree entries for a seed: kind 'd' (folder), 'f' (file)
// or 'l' (symlink to target), name from fuzzNames, target from
// fuzzTargets.
func fuzzTree(entries ...string) []byte {
	var b []byte
	for _, e := range entries {
		kind, rest, _ := strings.Cut(e, " ")
		name, target, _ := strings.Cut(rest, " => ")
		k := strings.Index("dfl", kind)
		n := indexOf(fuzzNames, name)
		tg := 0
		if kind == "l" {
			tg = indexOf(fuzzTargets, target)
		}
		if k < 0 || n < 0 || tg < 0 {
			panic("bad fuzz seed entry " + e)
		}
		b = append(b, byte(k+3*n), byte(tg))
	}
	return b
}

// fuzzPath encodes path components for a seed.
func fuzzPath(comps ...string) []byte {
	var b []byte
	for _, c := range comps {
		i := indexOf(fuzzComps, c)
		if i < 0 {
			panic("bad fuzz seed component " + c)
		}
		b = append(b, byte(i))
	}
	return b
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// FuzzContainment checks Canonical and the workspace-write fence against
// what the kernel resolves, on a generated tree of folders, files and
// symlinks. Properties:
//   - Canonical never returns a path that is not absolute and clean;
//   - where the kernel resolves the whole path, Canonical agrees;
//   - where it does not, Canonical agrees with a component-by-component
//     kernel walk that appends the missing rest (docs/design.md §4 step 2);
//   - the existing part of a canonical path has no symlink left in it;
//   - the fence passes a write exactly when the canonical path lies
//     inside ws, and then the kernel's resolution of what exists lies
//     inside ws too.
func FuzzContainment(f *testing.F) {
	seeds := []struct {
		tree  []byte
		comps []byte
		raw   string
	}{
		{nil, nil, "a/../../x"},
		{nil, nil, "/abs"},
		{nil, nil, ".."},
		{nil, nil, "f "},
		{nil, nil, "f/"},
		{nil, nil, `"f"`},
		{nil, nil, "'a'/x"},
		{nil, nil, "a\x00b"},
		{nil, nil, ""},
		{nil, nil, "../ws_evil/x"},
		{nil, nil, "/proc/self/root/etc/hosts"},
		{nil, nil, "missing/../f"},
		{nil, nil, "missing/../../x"},
		{nil, nil, "f/x"},
		{nil, nil, "f/.."},
		{nil, nil, "//a//b//"},
		{nil, fuzzPath("$WS", "x"), ""},
		{nil, fuzzPath("/proc/self/root$WS", ".."), "out/x"},
		{nil, fuzzPath("$OUT", ".."), "ws/new"},
		{fuzzTree("l link1 => .."), fuzzPath("link1", "x"), ""},
		{fuzzTree("l link1 => ../.."), fuzzPath("link1"), "ws/x"},
		{fuzzTree("l link1 => /"), fuzzPath("link1", ".."), "tmp"},
		{fuzzTree("l link1 => $OUT"), fuzzPath("link1", "x"), ""},
		{fuzzTree("l link1 => $OUT/sub"), fuzzPath("link1", ".."), "x"},
		{fuzzTree("l link1 => $WS"), fuzzPath("link1", "link1", "f"), ""},
		{fuzzTree("l link1 => $WS_evil"), fuzzPath("link1", "x"), ""},
		{fuzzTree("l link1 => ../ws_evil"), fuzzPath("link1"), ""},
		{fuzzTree("l link1 => link2", "l link2 => link1"), fuzzPath("link1"), ""},
		{fuzzTree("l link1 => link1"), fuzzPath("link1", "x"), ""},
		{fuzzTree("l link1 => ."), fuzzPath("link1", "link1", "link1", "f"), ""},
		{fuzzTree("l link1 => missing"), fuzzPath("link1", "..", "f"), ""},
		{fuzzTree("l link1 => ../out/x"), fuzzPath("link1"), ""},
		{fuzzTree("l link1 => f"), fuzzPath("link1", "x"), ""},
		{fuzzTree("l link1 => link1/.."), fuzzPath("link1"), ""},
		{fuzzTree("d a", "l a/link1 => ../.."), fuzzPath("a", "link1"), "out/x"},
		{fuzzTree("d a/b", "l a/b/link1 => ../../.."), fuzzPath("a", "b", "link1", "..", "x"), ""},
		{fuzzTree("d a", "l a/link1 => a/b", "d a/b"), fuzzPath("a", "link1"), ""},
		{fuzzTree("d in", "l in/x => $OUT"), fuzzPath("in", "x", "x"), ""},
		{fuzzTree("d b", "l b/link2 => b/../.."), fuzzPath("b", "link2", "..", "..", "missing"), ""},
		{fuzzTree("l link1 => a", "l a => link1"), fuzzPath("link1", "missing"), ""},
		{fuzzTree("l link2 => $WS/a", "d a", "f a/c"), fuzzPath("link2", "c"), ""},
		{fuzzTree("l link1 => missing"), fuzzPath("missing", "..", "link1", "x"), ""},
		{fuzzTree("l link1 => .."), fuzzPath("missing", "", ".", "..", "link1"), "ws"},
	}
	for _, s := range seeds {
		f.Add(s.tree, s.comps, s.raw)
	}
	f.Fuzz(func(t *testing.T, tree, comps []byte, raw string) {
		root := tempRoot(t)
		ws := filepath.Join(root, "ws")
		out := filepath.Join(root, "out")
		makeLayout(t, root, "ws/f", "ws_evil/", "out/x", "out/sub/")
		expand := strings.NewReplacer("$WS", ws, "$OUT", out).Replace
		for i := 0; i+1 < len(tree) && i < 2*fuzzMaxEntries; i += 2 {
			kind := tree[i] % 3
			name := fuzzNames[int(tree[i]/3)%len(fuzzNames)]
			target := expand(fuzzTargets[int(tree[i+1])%len(fuzzTargets)])
			fuzzCreate(t, ws, name, kind, target)
		}
		var parts []string
		for i, c := range comps {
			if i == fuzzMaxComps {
				break
			}
			parts = append(parts, expand(fuzzComps[int(c)%len(fuzzComps)]))
		}
		if raw != "" {
			parts = append(parts, raw)
		}
		path := strings.Join(parts, "/")
		checkContainment(t, ws, path)
	})
}

// fuzzCreate creates one tree entry inside ws, never through a symlink:
// every parent must be a real folder (missing ones are made), so a link
// planted by an earlier entry cannot carry the creation outside.
func fuzzCreate(t *testing.T, ws, name string, kind byte, target string) {
	dir := ws
	elems := strings.Split(name, "/")
	for _, e := range elems[:len(elems)-1] {
		dir = filepath.Join(dir, e)
		fi, err := os.Lstat(dir)
		switch {
		case errors.Is(err, os.ErrNotExist):
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		case err != nil:
			t.Fatal(err)
		case !fi.IsDir():
			return // a file or a symlink is in the way: skip the entry
		}
	}
	p := filepath.Join(dir, elems[len(elems)-1])
	if _, err := os.Lstat(p); err == nil {
		return
	}
	var err error
	switch kind {
	case 0:
		err = os.Mkdir(p, 0o755)
	case 1:
		err = os.WriteFile(p, []byte("x"), 0o644)
	default:
		err = os.Symlink(target, p)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// checkContainment checks the properties of FuzzContainment for one path
// taken relative to ws.
func checkContainment(t *testing.T, ws, path string) {
	canon, err := Canonical(ws, path)
	if path == "" || strings.IndexByte(path, 0) >= 0 {
		if fserr.CodeOf(err) != fserr.InvalidArgument {
			t.Fatalf("Canonical(%q) = %q, %v; want FS_INVALID_ARGUMENT", path, canon, err)
		}
		return
	}
	if err == nil && (!filepath.IsAbs(canon) || filepath.Clean(canon) != canon) {
		t.Fatalf("Canonical(%q) = %q: not absolute and clean", path, canon)
	}

	full := path
	if !filepath.IsAbs(full) {
		full = ws + "/" + full
	}
	// /proc entries other than /proc/self/root change under our feet
	// (fds, threads) or resolve to things that are not paths.
	pseudo := func(p string) bool {
		for _, d := range []string{"/proc", "/sys", "/dev"} {
			if _, ok := pathmatch.Within(d, p); ok {
				return true
			}
		}
		return false
	}
	kernelOK := !strings.Contains(strings.ReplaceAll(full, "/proc/self/root/", "/"), "proc") &&
		len(full) < unix.PathMax && (err != nil || !pseudo(canon))

	if kernelOK {
		// The kernel's own answer for the whole path (a trailing slash
		// dropped, as Canonical documents).
		kpath, kerr := kernelResolve(dropTrailingSlash(full))
		switch {
		case kerr == nil && !pseudo(kpath) && filepath.IsAbs(kpath):
			if err != nil {
				t.Fatalf("Canonical(%q): %v; the kernel resolves it to %s", path, err, kpath)
			}
			if canon != kpath {
				t.Fatalf("Canonical(%q) = %s; the kernel resolves it to %s", path, canon, kpath)
			}
		case errors.Is(kerr, unix.ENOTDIR) || errors.Is(kerr, unix.ELOOP):
			if err == nil {
				t.Fatalf("Canonical(%q) = %s; the kernel says %v", path, canon, kerr)
			}
		case errors.Is(kerr, unix.ENOENT):
			ref, rerr, known := walkReference(full)
			switch {
			case !known:
			case rerr != nil:
				if err == nil {
					t.Fatalf("Canonical(%q) = %s; the kernel walk says %v", path, canon, rerr)
				}
			case err != nil:
				// Canonical counts symlinks over the whole path, the
				// walk per component: only a loop may differ.
				if fserr.CodeOf(err) != fserr.IO {
					t.Fatalf("Canonical(%q): %v; the kernel walk gives %s", path, err, ref)
				}
			case canon != ref:
				t.Fatalf("Canonical(%q) = %s; the kernel walk gives %s", path, canon, ref)
			}
		}
	}
	if err != nil {
		return
	}

	// The existing part of the canonical path has no symlink left in it,
	// and the missing rest hangs off a folder.
	existing := "/"
	if kernelOK {
		for _, c := range splitPath(canon) {
			next := filepath.Join(existing, c)
			_, lerr := os.Lstat(next)
			if errors.Is(lerr, unix.ENOENT) {
				break
			}
			if lerr != nil {
				t.Fatalf("Canonical(%q) = %s, but %s: %v", path, canon, next, lerr)
			}
			existing = next
		}
		kpath, kerr := kernelResolve(existing)
		if kerr != nil || kpath != existing {
			t.Fatalf("Canonical(%q) = %s: its existing part %s resolves to %q, %v", path, canon, existing, kpath, kerr)
		}
	}

	// The fence passes exactly the canonical paths inside ws.
	fence := NewFence(policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, MaxMode: policy.DangerFullAccess, Approval: policy.ApprovalNever})
	target, rerr := fence.Resolve(path)
	if rerr != nil || target.Path != canon {
		t.Fatalf("Resolve(%q) = %+v, %v; Canonical says %s", path, target, rerr, canon)
	}
	werr := fence.CheckWrite("write", &target)
	rel, inside := pathmatch.Within(ws, canon)
	if (werr == nil) != inside {
		t.Fatalf("CheckWrite(%q) [canonical %s] = %v; pathmatch.Within(ws) = %v", path, canon, werr, inside)
	}
	if werr != nil {
		var de *policy.DeniedError
		if !errors.As(werr, &de) || de.Reason != policy.ReasonOutsideRoots {
			t.Fatalf("CheckWrite(%q) = %v; want %q", path, werr, policy.ReasonOutsideRoots)
		}
		return
	}
	if target.root != ws || target.rel != rel {
		t.Fatalf("CheckWrite(%q): Root, Rel = %q, %q; want %q, %q", path, target.root, target.rel, ws, rel)
	}
	if kernelOK {
		if _, ok := pathmatch.Within(ws, existing); !ok {
			t.Fatalf("CheckWrite(%q) passed, but what exists of it, %s, is outside %s", path, existing, ws)
		}
	}
}

// dropTrailingSlash drops the trailing slashes of p, but not of "/".
func dropTrailingSlash(p string) string {
	if q := strings.TrimRight(p, "/"); q != "" {
		return q
	}
	return "/"
}

// kernelResolve opens p with O_PATH, following every symlink as open(2)
// does, and returns the path the kernel reached.
func kernelResolve(p string) (string, error) {
	fd, err := openFollowing(p)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	return readBack(fd)
}

// walkReference resolves the absolute path full one component at a time
// through the kernel: an existing name is opened (following its symlinks),
// ".." of a resolved folder is its parent, and once a name is missing the
// rest is appended lexically until a ".." climbs back to what exists. It
// reports known=false where it cannot tell without reimplementing
// Canonical: a dangling symlink, or anything the kernel reports oddly.
func walkReference(full string) (ref string, err error, known bool) {
	cur := "/"
	isDir := true
	missing := 0
	for _, c := range splitPath(full) {
		if missing == 0 && !isDir {
			return "", unix.ENOTDIR, true
		}
		switch {
		case c == ".":
			continue
		case c == "..":
			cur = filepath.Dir(cur)
			if missing > 0 {
				missing--
			}
			continue
		case missing > 0:
			cur = filepath.Join(cur, c)
			missing++
			continue
		}
		next := filepath.Join(cur, c)
		fd, oerr := openFollowing(next)
		switch {
		case errors.Is(oerr, unix.ENOENT):
			if _, lerr := os.Lstat(next); lerr == nil {
				return "", nil, false // a dangling symlink
			}
			cur, missing = next, 1
			continue
		case errors.Is(oerr, unix.ENOTDIR), errors.Is(oerr, unix.ELOOP):
			return "", oerr, true
		case oerr != nil:
			return "", nil, false
		}
		var st unix.Stat_t
		serr := unix.Fstat(fd, &st)
		resolved, rerr := readBack(fd)
		unix.Close(fd)
		if serr != nil || rerr != nil || !filepath.IsAbs(resolved) {
			return "", nil, false
		}
		cur, isDir = resolved, st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	return cur, nil, true
}
