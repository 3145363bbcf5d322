package repo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// mutatingCalls are the functions that change the file system through a
// plain path. In workspace-write mode every mutation must go through the
// sandbox's confined Dir instead, so these may appear only in the files
// listed in mayMutate.
var mutatingCalls = map[string]bool{
	"os.WriteFile": true, "os.Create": true, "os.CreateTemp": true, "os.MkdirTemp": true,
	"os.Rename": true, "os.Remove": true, "os.RemoveAll": true, "os.Mkdir": true, "os.MkdirAll": true,
	"os.Symlink": true, "os.Link": true, "os.Chmod": true, "os.Chown": true, "os.Lchown": true,
	"os.Chtimes": true, "os.Truncate": true,
	"unix.Open": true, "unix.Openat": true, "unix.Openat2": true, "unix.Creat": true,
	"unix.Rename": true, "unix.Renameat": true, "unix.Renameat2": true,
	"unix.Unlink": true, "unix.Unlinkat": true, "unix.Mkdir": true, "unix.Mkdirat": true,
	"unix.Link": true, "unix.Linkat": true, "unix.Symlink": true, "unix.Symlinkat": true,
	"unix.Truncate": true, "unix.Fchmodat": true, "unix.Fchownat": true,
	"unix.Rmdir": true, "unix.Mknod": true, "unix.Mknodat": true, "unix.Chmod": true, "unix.Chown": true,
	"unix.Lchown": true, "unix.Utimes": true, "unix.UtimesNano": true, "unix.UtimesNanoAt": true,
	"unix.Setxattr": true, "unix.Lsetxattr": true, "unix.Removexattr": true, "unix.Lremovexattr": true,
}

// mountCalls change what the file system looks like: only the mount
// layer of dsh-fs exec's child may call them, in the files listed in
// mayMount, never on a path a call names.
var mountCalls = map[string]bool{
	"unix.Mount": true, "unix.Unmount": true, "unix.MountSetattr": true, "unix.OpenTree": true,
	"unix.MoveMount": true, "unix.Fsopen": true, "unix.Fsmount": true, "unix.Fsconfig": true,
	"unix.PivotRoot": true, "unix.Unshare": true,
}

var mayMount = map[string]bool{
	"internal/sandbox/mounts_apply.go": true, // the mount layer: binds, hides, pins
	"internal/sandbox/overlay.go":      true, // the toolchain caches' overlays, on the descriptor of each cache
	"internal/sandbox/rotree.go":       true, // the read-only tree
	"internal/sandbox/sockets.go":      true, // socket folders hidden where Landlock cannot refuse them
	"internal/tty/devpts.go":           true, // the session's own devpts
	"internal/shell/tty.go":            true, // the session's /proc
	"internal/shell/probe.go":          true, // the user-namespace probe's test mount
}

// startCalls start another program. Each starts a fixed program (dsh-fs
// itself, the trusted approval command, CMD of exec, git for the
// person), never one a file names; mayStart lists where.
var startCalls = map[string]bool{
	"exec.Command": true, "exec.CommandContext": true, "os.StartProcess": true,
	"unix.Exec": true, "unix.ForkExec": true,
}

var mayStart = map[string]bool{
	// Every re-run of dsh-fs itself (shell.selfCommand): exec's child,
	// the probes, the brokered call, the MCP escalator.
	"internal/shell/entry.go":       true,
	"internal/shell/child.go":       true, // exec's child becomes CMD
	"internal/cli/mcp.go":           true, // dsh-fs hands over to dsh-fs-mcp beside it
	"internal/approval/approval.go": true, // the trusted approval_command
	// The toolchains asked for their caches (go env GOCACHE …): the
	// person's own, from exec's $PATH, outside the session and before it.
	"internal/sandbox/caches.go": true,
	"internal/session/init.go":   true, // the session's init starts CMD
}

// writeFlags are the open flags that make os.OpenFile a mutation.
var writeFlags = []string{"O_WRONLY", "O_RDWR", "O_CREATE", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE"}

// mayMutate is where mutations of user paths live: the confined handles,
// and danger-full-access's plain folder open beside them; and the one
// file that opens a fixed path for writing, /dev/tty, to ask a person.
var mayMutate = map[string]bool{
	"internal/sandbox/dir.go": true,
	// The one resolver: its opens pass only readFlags, and --mkdir makes
	// missing folders one at a time through their parent's handle.
	"internal/sandbox/walk.go":      true,
	"internal/approval/approval.go": true,
	// The exec session record, in exec's own private runtime folder
	// (/run/dsh-fs or $XDG_RUNTIME_DIR), never a path a call names.
	"internal/session/record.go": true,
	// The git guard's quarantine: what a session planted in a git
	// directory of the writable roots, moved by the supervisor after the
	// session through descriptors of that git directory, never by a path
	// a call names.
	"internal/gitguard/quarantine.go": true,
	// The person's terminal, reopened for writing through exec's own
	// descriptor of it (/proc/self/fd/N) when exec was given it to read
	// only: a character device checked to be that terminal, never a path
	// a call names.
	"internal/tty/relay.go": true,
	// The session's own /dev/ptmx, a fixed device of the devpts exec's
	// child has just mounted, opened to make the session's terminal
	// before anything of the session runs.
	"internal/tty/handover.go": true,
	// The overlays' upper and work folders, in the session's private
	// folder: made and removed through descriptors, each name opened
	// without following a symlink beneath its folder's descriptor.
	"internal/sandbox/overlay.go": true,
}

// mayOpenToRead is where the read side opens user paths by handle
// (sandbox.openRead, one openat per name), and where the mount layer of
// dsh-fs exec opens its mount points as O_PATH descriptors: unix.Open,
// Openat and Openat2 are allowed there when their flags name no write
// flag.
var mayOpenToRead = map[string]bool{
	"internal/sandbox/readopen.go": true,
	// The mount plan's bounded folder reads, and the mount points'
	// O_PATH descriptors.
	"internal/sandbox/mounts.go":       true,
	"internal/sandbox/mounts_apply.go": true,
	// The git guard's reads: the walk's .git pointers, and a git
	// directory's config, includes and hooks.
	"internal/sandbox/gitwalk.go": true,
	"internal/gitguard/read.go":   true,
	// A move's walk of what lies beneath the folder it moves (O_PATH and
	// read-only descriptors), and the one open of /proc before it is
	// verified.
	"internal/sandbox/beneath.go": true,
	"internal/sandbox/procfs.go":  true,
}

// TestNoPlainPathMutations audits the product code (tests, scripts and
// the docs generator aside): no file outside internal/sandbox/dir.go calls a
// function that mutates the file system by path, or opens a file for
// writing by path. A new write path that bypasses the confined handle
// fails here. So does a mount call outside the mount layer (mayMount) and
// a program started anywhere but the places in mayStart; the syscall
// package's functions count as x/sys/unix's.
func TestNoPlainPathMutations(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	// What each registered file was found to call: a registration
	// nothing needs any more is removed, so the lists stay exact.
	mounted, started := map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir(harness.RepoRoot, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		path, err := filepath.Rel(harness.RepoRoot, full)
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case "scripts", "bench", "e2e", "docs", ".git":
				return filepath.SkipDir
			}
			// Go never builds a testdata folder: the patch replay's
			// fixtures are another project's sources.
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, full, nil, 0)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			// The syscall package's calls are x/sys/unix's, audited alike.
			name := strings.Replace(calleeName(call), "syscall.", "unix.", 1)
			mounted[path] = mounted[path] || mountCalls[name]
			started[path] = started[path] || startCalls[name]
			switch {
			case mountCalls[name] && !mayMount[path]:
				t.Errorf("%s: %s changes mounts outside the mount layer (mayMount)", fset.Position(call.Pos()), name)
			case startCalls[name] && !mayStart[path]:
				t.Errorf("%s: %s starts a program outside the places that may (mayStart)", fset.Position(call.Pos()), name)
			case (name == "unix.Open" || name == "unix.Openat" || name == "unix.Openat2") && mayOpenToRead[path] && !argsOpenForWriting(call):
				// A read by handle, or an O_PATH descriptor.
			case mutatingCalls[name] && !mayMutate[path]:
				t.Errorf("%s: %s mutates by path outside the confined handle (internal/sandbox/dir.go)", fset.Position(call.Pos()), name)
			case name == "os.OpenFile" && len(call.Args) > 1 && opensForWriting(call.Args[1]) && !mayMutate[path]:
				t.Errorf("%s: os.OpenFile for writing outside the confined handle", fset.Position(call.Pos()))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("audited only %d files: the walk is broken", checked)
	}
	for path := range mayMount {
		if !mounted[path] {
			t.Errorf("%s is in mayMount but makes no mount call: remove it", path)
		}
	}
	for path := range mayStart {
		if !started[path] {
			t.Errorf("%s is in mayStart but starts no program: remove it", path)
		}
	}
}

func calleeName(call *ast.CallExpr) string {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return pkg.Name + "." + sel.Sel.Name
}

// argsOpenForWriting reports whether any argument of an open call (its
// flags, or an OpenHow's) names a write flag.
func argsOpenForWriting(call *ast.CallExpr) bool {
	for _, a := range call.Args {
		if opensForWriting(a) {
			return true
		}
	}
	return false
}

func opensForWriting(flags ast.Expr) bool {
	found := false
	ast.Inspect(flags, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			for _, f := range writeFlags {
				if sel.Sel.Name == f {
					found = true
				}
			}
		}
		return true
	})
	return found
}
