package sandbox

import (
	"iter"
	"path"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// The fence's paths are slash paths on every OS, from "/": on Windows
// "/C:/Users/me/proj" (internal/fsys's FromOS), so the walk, the roots
// and the globs are one code. These are package path's functions, under
// names no parameter called path hides; filepath would spell a path with
// Windows' backslashes.

func joinPath(elem ...string) string { return path.Join(elem...) }

func dirOf(p string) string { return path.Dir(p) }

// ancestors yields p and each folder above it, nearest first, ending
// with the first whose folder is itself: "/" of an absolute path, "." of
// a relative one. Every walk up the folders goes through it, so none
// waits for a "/" that a path in another spelling never reaches (`C:\x`,
// whose path.Dir is "." and then "." again).
func ancestors(p string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for {
			if !yield(p) {
				return
			}
			up := dirOf(p)
			if up == p {
				return
			}
			p = up
		}
	}
}

func baseOf(p string) string { return path.Base(p) }

func cleanPath(p string) string { return path.Clean(p) }

func isAbs(p string) bool { return path.IsAbs(p) }

func splitDir(p string) (dir, file string) { return path.Split(p) }

// fromOS is the fence's path of p as the OS spells it (fsys.FromOS): on
// Unix p itself; on Windows `C:\x` is "/C:/x", and a path the fence
// does not take (a UNC share, a device, a path relative to a drive's own
// folder) is FS_INVALID_ARGUMENT.
func fromOS(p string) (string, error) {
	s, err := fsys.FromOS(p)
	if err != nil {
		return p, fserr.New(fserr.InvalidArgument, p+": not a path the file tool takes here (a stream, a network share, a device, or a path relative to a drive's own folder)")
	}
	return s, nil
}

// osPaths is fromOS of each of ps; one it does not take is kept as
// written, and is then refused where it is opened (a backslash is no
// name the fence opens).
func osPaths(ps []string) []string {
	if len(ps) == 0 {
		return ps
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = osPath(p)
	}
	return out
}

// osPath is fromOS of p, or p where it does not take it.
func osPath(p string) string {
	if s, err := fromOS(p); err == nil {
		return s
	}
	return p
}

// fencePaths is p with its paths and globs as the fence spells them: on
// Unix p itself.
func fencePaths(p policy.Policy) policy.Policy {
	if fsys.ToOS("/x") == "/x" {
		return p // Unix: every path is already the fence's
	}
	p.Cwd, p.Dir, p.Home = osPath(p.Cwd), osPath(p.Dir), osPath(p.Home)
	p.Workspaces, p.AllowRoots, p.WritableRoots = osPaths(p.Workspaces), osPaths(p.AllowRoots), osPaths(p.WritableRoots)
	p.Within, p.ReadWithin, p.Protected, p.DenyRead = osPaths(p.Within), osPaths(p.ReadWithin), osPaths(p.Protected), osPaths(p.DenyRead)
	p.ConfigFiles, p.TrustedFiles = osPaths(p.ConfigFiles), osPaths(p.TrustedFiles)
	return p
}
