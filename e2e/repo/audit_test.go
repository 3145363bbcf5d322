package repo

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The audit reads the product's Go sources (tests, scripts, e2e, bench
// and the docs generator aside) and sorts every call of the packages that
// reach the kernel into kinds. Each kind is allowed only in the files of
// its registry, each entry with the reason it may; an entry nothing in
// its file needs any more is a finding too, so the registries stay exact.
// The syscall package's functions count as x/sys/unix's, and a package is
// known by its import path, not by the name a file gives it. A
// //go:linkname directive is a kind too, registered like the calls.

// auditedPackages names, by import path, the packages whose calls the
// audit classifies, and the name a call is known by in the kinds below.
var auditedPackages = map[string]string{
	"os":                    "os",
	"os/exec":               "exec",
	"syscall":               "unix", // the syscall package's calls are x/sys/unix's
	"golang.org/x/sys/unix": "unix",
	// The fence's OS layer: the same calls as x/sys/unix's under the
	// same names (on Windows, over handles), so a call of it is audited
	// in its caller exactly as x/sys/unix's would be.
	"github.com/dshfs/dsh-fs/internal/fsys": "unix",
	// Windows' calls, of which those in mutatingCalls and the raw ones
	// are registered.
	"golang.org/x/sys/windows": "windows",
	// A rawinit.Op is a system call the session's first process makes.
	"github.com/dshfs/dsh-fs/internal/session/rawinit": "rawinit",
}

// mutatingCalls are the functions that change the file system through a
// plain path. In workspace-write mode every mutation must go through the
// sandbox's confined Dir instead, so these may appear only in the files
// listed in mayMutate. Calls on a descriptor (Fchmod, Ftruncate, ...) are
// not listed: the descriptor came from an open this audit checked.
var mutatingCalls = map[string]bool{
	"os.WriteFile": true, "os.Create": true, "os.CreateTemp": true, "os.MkdirTemp": true,
	"os.Rename": true, "os.Remove": true, "os.RemoveAll": true, "os.Mkdir": true, "os.MkdirAll": true,
	"os.Symlink": true, "os.Link": true, "os.Chmod": true, "os.Chown": true, "os.Lchown": true,
	"os.Chtimes": true, "os.Truncate": true, "os.CopyFS": true, "os.OpenRoot": true,
	"unix.Open": true, "unix.Openat": true, "unix.Openat2": true, "unix.Creat": true, "unix.OpenByHandleAt": true,
	"unix.Rename": true, "unix.Renameat": true, "unix.Renameat2": true, "unix.RenameatxNp": true, "unix.RenamexNp": true,
	"unix.Unlink": true, "unix.Unlinkat": true, "unix.Mkdir": true, "unix.Mkdirat": true,
	"unix.Link": true, "unix.Linkat": true, "unix.Symlink": true, "unix.Symlinkat": true,
	"unix.Truncate": true, "unix.Fchmodat": true, "unix.Fchownat": true,
	"unix.Rmdir": true, "unix.Mknod": true, "unix.Mknodat": true, "unix.Mkfifo": true, "unix.Mkfifoat": true,
	"unix.Chmod": true, "unix.Chown": true, "unix.Lchown": true,
	"unix.Utime": true, "unix.Utimes": true, "unix.UtimesNano": true, "unix.UtimesNanoAt": true,
	"unix.Lutimes": true, "unix.Futimesat": true,
	"unix.Setxattr": true, "unix.Lsetxattr": true, "unix.Removexattr": true, "unix.Lremovexattr": true,
	// Windows: an open that may create or write (NtCreateFile, CreateFile
	// take a disposition, not flags), a rename, delete, link or truncate
	// by a handle's information class, and an FSCTL (a reparse point set).
	"windows.NtCreateFile": true, "windows.CreateFile": true, "windows.NtSetInformationFile": true,
	"windows.SetFileInformationByHandle": true, "windows.MoveFile": true, "windows.MoveFileEx": true,
	"windows.DeleteFile": true, "windows.RemoveDirectory": true, "windows.CreateDirectory": true,
	"windows.CreateHardLink": true, "windows.CreateSymbolicLink": true, "windows.DeviceIoControl": true,
	"windows.SetEndOfFile": true, "windows.SetFileAttributes": true,
}

// openCalls open by path with flags: outside mayMutate they are allowed
// only in mayOpenToRead, and only with flags that name no write flag.
var openCalls = map[string]bool{"unix.Open": true, "unix.Openat": true, "unix.Openat2": true}

// writeFlags are the open flags that make os.OpenFile (or an open of
// openCalls) a mutation.
var writeFlags = []string{"O_WRONLY", "O_RDWR", "O_CREATE", "O_CREAT", "O_TRUNC", "O_APPEND", "O_TMPFILE"}

// mountCalls besides those isMountCall finds by name: what changes what
// the file system looks like without "mount" in its name.
var mountCalls = map[string]bool{
	"unix.OpenTree": true, "unix.Fsopen": true, "unix.Fsconfig": true, "unix.Fspick": true,
	"unix.PivotRoot": true, "unix.Chroot": true, "unix.Unshare": true, "unix.Setns": true,
}

// isMountCall reports whether name is a mount call: every x/sys/unix (or
// syscall) function with "mount" in its name, whatever its case (Mount,
// Unmount, MountSetattr, MoveMount, Fsmount, and any the package adds),
// and mountCalls.
func isMountCall(name string) bool {
	fn, ok := strings.CutPrefix(name, "unix.")
	return ok && (strings.Contains(strings.ToLower(fn), "mount") || mountCalls[name])
}

// isRawSyscall reports whether name is a raw system call, whatever the
// number it makes: Syscall, Syscall6, RawSyscall, RawSyscallNoError,
// AllThreadsSyscall, ... of x/sys/unix or syscall. Any of them can do
// what every other kind here does, so each is registered on its own.
func isRawSyscall(name string) bool {
	fn, ok := strings.CutPrefix(name, "unix.")
	if !ok {
		fn, ok = strings.CutPrefix(name, "windows.")
	}
	return ok && strings.Contains(fn, "Syscall") || rawinitOps[name]
}

// rawinitOps are the makers of rawinit's ops: each is a system call,
// of any number, that a session's first process makes before CMD.
var rawinitOps = map[string]bool{"rawinit.Call": true, "rawinit.Op{}": true}

// startCalls start another program. Each starts a fixed program (dsh-fs
// itself, the trusted approval command, CMD of exec, git for the
// person), never one a file names; mayStart lists where. An exec.Cmd
// made as a literal counts as exec.Command ("exec.Cmd{}").
var startCalls = map[string]bool{
	"exec.Command": true, "exec.CommandContext": true, "exec.Cmd{}": true, "os.StartProcess": true,
	"unix.Exec": true, "unix.ForkExec": true, "unix.StartProcess": true,
}

// The kinds of call the audit finds.
const (
	kindMutate   = "mutate"
	kindOpen     = "open to read"
	kindMount    = "mount"
	kindStart    = "start"
	kindRaw      = "raw syscall"
	kindLinkname = "linkname" // a //go:linkname directive: a reach into another package's unexported code
	kindHidden   = "hidden"   // a dot import of an audited package
	kindUnneeded = "unneeded" // a registry entry nothing needs
)

// A registry maps a file, slash-separated from the repository root, to
// the reason it may make the calls of one kind.
type registry map[string]string

var mayMount = registry{
	"internal/session/child/mounts_linux.go":      "the mount layer: binds, hides, pins",
	"internal/session/child/overlay_linux.go":     "the toolchain caches' overlays, on the descriptor of each cache",
	"internal/session/child/rotree_linux.go":      "the read-only tree",
	"internal/session/child/runtime_linux.go":     "exec's runtime folder covered by a tmpfs holding only the session's record, bound read-only",
	"internal/session/child/sockets_linux.go":     "socket folders hidden where Landlock cannot refuse them",
	"internal/session/child/readview_linux.go":    "the read view: the home folders covered by an empty tmpfs, the kept paths bound back into it",
	"internal/session/child/proc_linux.go":        "the session's /proc",
	"internal/session/layout/mountlayer_linux.go": "the probe of mount_setattr with an unknown flag, which mounts nothing (ReadOnlyTree)",
	"internal/session/child/compile_linux.go":     "the probe of mount_setattr with an unknown flag, which mounts nothing (CompileFiles' kernel check)",
	"internal/tty/devpts_linux.go":                "the session's own devpts",
	"internal/session/supervisor/probe_linux.go":  "the user-namespace probe's test mount",
	"internal/session/supervisor/thread_linux.go": "the session's mount and network namespaces taken on a thread of the supervisor, its mounts made private there; the mount layer itself is child's",
	"internal/testns/testns_linux.go":             "for tests only: an empty tmpfs over the runtime folder, in the test binary's own mount namespace",
}

var mayStart = registry{
	"internal/session/supervisor/entry.go": "every re-run of dsh-fs itself (supervisor.selfCommand): exec's child, the probes, the brokered call, the MCP escalator",
	"internal/cli/os_unix.go":              "dsh-fs hands over to dsh-fs-mcp beside it (execve)",
	"internal/cli/os_windows.go":           "dsh-fs hands over to dsh-fs-mcp beside it (started and waited for: Windows has no execve)",
	"internal/approval/approval.go":        "the trusted approval_command",
	"internal/session/supervisor/start_darwin.go": "the session's CMD on macOS, run by the supervisor itself under " +
		"/usr/bin/sandbox-exec and its Seatbelt profile (seatbeltCommand): there is no child there",
	"internal/session/toolchains/ask.go": "the toolchains asked for their caches (go env GOCACHE …): the person's own, " +
		"from exec's $PATH, outside the session and before it",
	"internal/testns/testns_linux.go": "for tests only: the test binary run again in a mount namespace of its own",
}

var mayRawSyscall = registry{
	"internal/kernel/seccompasm_linux.go": "the probe of seccomp(SECCOMP_SET_MODE_STRICT) with a bad flag, which x/sys/unix has no wrapper for",
	"internal/tty/handover_linux.go":      "ioctl(TIOCGPTPEER), which returns a descriptor x/sys/unix's ioctl wrappers drop",
	"internal/sandbox/os_darwin.go": "fcntl(F_GETPATH), macOS's read-back of a descriptor's path into a MAXPATHLEN " +
		"buffer, which x/sys/unix has no pointer form of fcntl for",
	"internal/session/rawinit/child_linux.go": "the session's first process between its fork and CMD's execve, where no Go function may run: " +
		"clone, its descriptors placed (dup3, fcntl, close_range), setsid and TIOCSCTTY, PR_SET_PDEATHSIG, chdir, " +
		"the mount of its PID namespace's /proc, CMD's process group and TIOCSPGRP, the signal mask, execve",
	"internal/session/rawinit/layers_linux.go": "the kernel layers the first process installs on itself without Go: keyctl, " +
		"no_new_privs, landlock_restrict_self, the bounding set, securebits, ambient set and capset, seccomp",
	"internal/session/rawinit/ops_linux.go": "the caller's ops (Spec.Ops), any system call of a program readied before the fork, " +
		"run by the first process once its user namespace has its maps: the mount layer of an ordinary user's session " +
		"(child.CompileFiles), and fstat and close of the ops' own descriptors",
	"internal/session/child/compile_linux.go": "the mount layer compiled into rawinit ops (CompileFiles; compilemounts.go " +
		"makes them through its call and into): the same mounts as the applier's (open_tree, mount_setattr, move_mount, " +
		"fsopen, fsconfig, fsmount, the runtime folder's tmpfs and remount), each target opened by openat2 without " +
		"symlinks and checked by fstat, the read view's mount points and the record's made in the session's own new " +
		"tmpfs (mkdirat, openat O_CREAT), the ops' own descriptors closed, chdir into the working folder",
	"internal/session/child/unshared_linux.go": "what an ordinary user's session makes in its own new user namespace, compiled " +
		"into rawinit ops (StartInUserNamespace), as Apply makes it on a root thread: / made private, the loopback " +
		"(socket, SIOCSIFFLAGS), the session's devpts and ptmx bind, its terminal (open /dev/ptmx, TIOCSPTLCK, " +
		"TIOCGPTPEER, TCSETS, TIOCSWINSZ), the proxy bridge's listener (socket, bind 127.0.0.1, listen), the master and " +
		"the listener sent back (sendmsg), and the write layer's rules on what those mounts made (openat O_PATH, " +
		"landlock_add_rule), the ops' own descriptors closed",
	"internal/session/rawinit/unshared_linux.go": "the first process's fork without the caller's heap: madvise " +
		"MADV_DONTFORK of the heap's pages before the clone and MADV_DOFORK after it, and in the child, where the " +
		"runtime's own hook would read the heap, rt_sigaction to reset its signal handlers and rt_sigprocmask",
	"internal/session/rawinit/tp_linux_amd64.go": "arch_prctl(ARCH_GET_FS), the thread pointer, whose TLS word and C " +
		"data the first process keeps (unshared_linux.go), which x/sys/unix has no wrapper for",
	"internal/session/rawinit/init_linux.go": "the session's init without Go: CMD's fork, rt_sigtimedwait, wait4, kill of CMD " +
		"and of the rest of its PID namespace, clock_gettime, and its report of the end",
	"internal/session/rawinit/vfork_linux_amd64.s": "CMD's start from the init: clone with CLONE_VM|CLONE_VFORK, in " +
		"assembly so that the child's return cannot change the parent's return address",
	"internal/session/rawinit/vfork_linux_arm64.s": "CMD's start from the init: clone with CLONE_VM|CLONE_VFORK, in " +
		"assembly so that the child's return cannot change the parent's return address",
	"internal/session/rawinit/vfork_fork_linux.go": "CMD's start from the init as a plain fork (clone), on an architecture " +
		"without rawVfork's assembly (vfork_linux_*.s, which makes the same clone with CLONE_VM|CLONE_VFORK)",
}

// mayMutate is where mutations of user paths live: the confined handles,
// and danger-full-access's plain folder open beside them; and the few
// files that write a fixed path of their own, never one a call names.
var mayMutate = registry{
	"internal/testns/testns_linux.go":             "for tests only: the runtime folder made where missing, before a tmpfs covers it",
	"internal/session/supervisor/thread_linux.go": "/dev/null opened for an unset standard stream of the session's first process, as os/exec opens it",
	"internal/fsys/windows.go": "the fence's OS layer on Windows: NtCreateFile of one name beneath a folder's handle " +
		"(Openat, Mkdirat), each a reparse point opened itself and refused where followed, audited in its callers as " +
		"x/sys/unix's Openat",
	"internal/fsys/windows_stat.go": "the fence's OS layer on Windows: NtSetInformationFile and SetFileInformationByHandle " +
		"on a handle it opened (ntSetInfo, setInfo: rename, delete, link, truncate, attributes) and " +
		"FSCTL_GET_REPARSE_POINT, the read of a reparse point's target (DeviceIoControl)",
	"internal/fsys/folderlock_windows.go": "a folder's lock on Windows, which locks no folder: the lock file of the " +
		"folder's identity in the user's %LOCALAPPDATA%\\dsh-fs\\locks, made where missing, held with LockFileEx",
	"internal/fsys/unix.go": "the fence's OS layer on Unix: each call x/sys/unix's under its own name, audited in " +
		"its callers as x/sys/unix's (auditedPackages), so the layer adds no path of its own",
	"internal/sandbox/dir.go": "the confined handles, and danger-full-access's plain folder open beside them",
	"internal/sandbox/walk.go": "the one resolver: its opens pass only readFlags, and --mkdir makes missing " +
		"folders one at a time through their parent's handle",
	"internal/approval/terminal_unix.go":    "the person's /dev/tty, opened for writing to ask",
	"internal/approval/terminal_windows.go": "the console's input and output (CONIN$, CONOUT$), opened for writing to ask",
	"internal/session/kept/open_unix.go": "the lock file of the kept answers, in exec's own private runtime folder, " +
		"never a path a call names",
	"internal/sandbox/accel_linux.go": "Linux's accelerators of the resolver and the confined handles (walk.go, " +
		"dir.go): openat2 passing only readFlags, and the unnamed temp file (O_TMPFILE) made in a confined folder " +
		"and linked into it through the verified /proc",
	"internal/sandbox/os_linux.go": "the confined handles' rename that never replaces (renameat2 RENAME_NOREPLACE), " +
		"called by dir.go with two confined folders' descriptors",
	"internal/sandbox/os_darwin.go": "the confined handles' rename that never replaces (renameatx_np RENAME_EXCL), " +
		"called by dir.go with two confined folders' descriptors",
	"internal/gitguard/os_linux.go": "the git guard's rename that never replaces (quarantine.go) and its reads of a " +
		"regular file of a git directory (read.go), through that git directory's descriptors",
	"internal/gitguard/os_darwin.go": "the git guard's rename that never replaces (quarantine.go) and its reads of a " +
		"regular file of a git directory (read.go), through that git directory's descriptors",
	"internal/session/rawinit/usermaps_linux.go": "the uid_map, setgroups and gid_map of the user namespace of the process " +
		"exec's supervisor has just forked, in /proc/PID, never a path a call names",
	"internal/session/kept/kept.go": "the kept answers of the toolchains and the probes, in exec's own private runtime folder " +
		"(/run/dsh-fs or $XDG_RUNTIME_DIR/dsh-fs), never a path a call names",
	"internal/gocacheprog/gocacheprog.go": "the Go build cache program of a session: new entry files in " +
		"$GOCACHE as the go command inside the session would write them, under the session's own layers",
	"internal/denials/denials.go": "the session's denial log, written by exec's supervisor in the session's own folder " +
		"of its private runtime folder (a fixed name, never a path a call names)",
	"internal/session/wire/record_unix.go": "the exec session record, in exec's own private runtime folder " +
		"(/run/dsh-fs or $XDG_RUNTIME_DIR), never a path a call names",
	"internal/gitguard/quarantine.go": "the git guard's quarantine: what a session planted in a git directory " +
		"of the writable roots, moved by the supervisor after the session through descriptors of that git " +
		"directory, never by a path a call names; a folder the guard cannot read moved aside into a quarantine " +
		"folder beside it, and a folder of the supervisor's own user given back its owner's read and search rights, " +
		"through the descriptor of its parent",
	"internal/tty/termios_linux.go": "the person's terminal, reopened for writing through exec's own descriptor of it " +
		"(/proc/self/fd/N) when exec was given it to read only: a character device checked to be that terminal",
	"internal/tty/termios_other.go": "the person's terminal, reopened for writing as /dev/tty where there is no /proc " +
		"(macOS) when exec was given it to read only: kept only when it is the same character device",
	"internal/tty/handover_linux.go": "the session's own /dev/ptmx, a fixed device of the devpts exec's child has " +
		"just mounted, opened to make the session's terminal before anything of the session runs",
	"internal/treeindex/store.go": "the roots' tree index files, written to a temporary file and renamed in the " +
		"store's own folder (exec's private runtime folder), never a path a call names",
	"internal/audit/open_windows.go": "the audit log on Windows, appended at the path the trusted audit_log names " +
		"(never one a call names), opened with CreateFile(OPEN_ALWAYS) without following a reparse point, refused " +
		"with more than one link, and judged as a trusted file, as opened",
	"internal/trust/owner_windows.go": "read-only: CreateFile(OPEN_EXISTING) of a trusted file's folders for " +
		"READ_CONTROL and attributes, without following a reparse point, to read their owner and access list",
	"internal/audit/open_unix.go": "the session's audit log, appended by exec's supervisor at the path the trusted " +
		"audit_log names (never one a call names), outside every writable root, opened without following a " +
		"symlink and judged as a trusted file, as opened",
	"internal/session/wire/index.go": "the tree index folder in exec's own private runtime folder (/run/dsh-fs or " +
		"$XDG_RUNTIME_DIR), never a path a call names",
	"internal/session/layout/placeholders_unix.go": "the placeholders of protected paths missing at the start, made by exec's " +
		"supervisor in the writable roots before the session at paths the trusted protected list names (never one a " +
		"call names), and removed after it only while the same file, still empty",
	"internal/session/child/runtime_linux.go": "the session folder and empty file made in the child's own new tmpfs over " +
		"exec's runtime folder, through that tmpfs root's descriptor: the mount point of the session's record",
	"internal/session/layout/overlay_unix.go": "the overlays' upper and work folders, in the session's private folder: made " +
		"and removed through descriptors, each name opened without following a symlink beneath its folder's descriptor",
	"internal/fsys/fsystest/junction_windows.go": "junctions the Windows tests of internal/fsys and internal/fsops make " +
		"in folders of their own (os.MkdirTemp); no dsh-fs command imports the package",
	"internal/session/seatbelt/sbpltest/lay.go": "the shared Seatbelt table's layouts, written by tests into " +
		"folders of their own (t.TempDir); no dsh-fs command imports the package",
	"internal/session/layout/overlay_linux.go": "the owner's bits given back to a folder of the overlays' or a session's " +
		"folder (RemoveTree) through its O_PATH descriptor, opened without following a symlink beneath its parent's",
	"internal/session/layout/overlay_other.go": "the owner's bits given back to a folder of a session's folder (RemoveTree) " +
		"by its name beneath its parent's descriptor, never following a symlink (fchmodat AT_SYMLINK_NOFOLLOW; macOS)",
	"internal/session/child/readview_linux.go": "the read view's mount points: folders and empty files made in the view's own new " +
		"tmpfs, in exec's child's private mount namespace, never on the person's disk",
	"internal/session/child/overlay_linux.go": "the overlays' upper and work folders made in the session's own new tmpfs, " +
		"through its detached mount's descriptor before it is attached, never on the person's disk",
}

// mayOpenToRead is where the git guard and a move's walk open by handle,
// and where the mount layer of
// dsh-fs exec opens its mount points as O_PATH descriptors: the calls of
// openCalls are allowed there when their flags name no write flag.
var mayOpenToRead = registry{
	"internal/pathmatch/paths.go":             "the bounded folder reads of the mount plan's walk and of a git directory's parts",
	"internal/treeindex/index.go":             "the tree index's folder reads (O_RDONLY|O_DIRECTORY|O_NOFOLLOW)",
	"internal/session/child/mounts_linux.go":  "the mount layer's mount points, as O_PATH descriptors",
	"internal/kernel/nosymlinks.go":           "the mount layer's mount points opened without following a symlink (O_PATH and read-only flags only)",
	"internal/kernel/nosymlinks_linux.go":     "the same opens as nosymlinks.go's walk in one openat2 (RESOLVE_NO_SYMLINKS, O_PATH and read-only flags only)",
	"internal/gitguard/read.go":               "the git guard's reads: a git directory's config, includes and hooks",
	"internal/gitguard/walk.go":               "the git guard's end walk: folders opened read-only to list them",
	"internal/sandbox/beneath.go":             "a move's walk of what lies beneath the folder it moves (O_PATH and read-only descriptors)",
	"internal/kernel/procfs_linux.go":         "the one open of /proc before it is verified",
	"internal/session/layout/sockets_unix.go": "the kernel's list of bound unix sockets, net/unix of the verified /proc",
	"internal/session/toolchains/identity_linux.go": "a toolchain's binary or config file looked at for the key of its kept answer " +
		"(an O_PATH descriptor, following symlinks)",
	"internal/sandbox/portable.go": "the portable build's handles (openHandle): the resolver's opens with readFlags, " +
		"a folder's search flags, a link's or another object's read-only flags",
}

// mayLinkname is where a //go:linkname reaches into the runtime: what no
// exported function gives, each a contract the Go release may change.
var mayLinkname = registry{
	"internal/session/rawinit/child_linux.go": "the runtime's hooks around a fork (syscall.runtime_BeforeFork, " +
		"AfterFork, AfterForkInChild), as package syscall calls them: a fork that runs no Go code after it",
}

// auditRegistries are the registries by kind.
var auditRegistries = map[string]registry{
	kindMutate: mayMutate, kindOpen: mayOpenToRead, kindMount: mayMount, kindStart: mayStart, kindRaw: mayRawSyscall,
	kindLinkname: mayLinkname,
}

// An auditFinding is one call in a file its kind's registry does not
// list, or one registry entry nothing needs.
type auditFinding struct {
	kind string
	path string // slash-separated, from the audited root
	msg  string
}

// auditSources audits the Go product sources under root, laid out as
// this repository is, against the registries, and returns what it found
// and how many files it read. TestNoPlainPathMutations runs it on the
// repository; TestAuditCatchesPlanted on trees with one planted call.
func auditSources(root string) (findings []auditFinding, checked int, err error) {
	fset := token.NewFileSet()
	used := map[string]map[string]bool{} // kind → file → a call of that kind is there
	for kind := range auditRegistries {
		used[kind] = map[string]bool{}
	}
	err = filepath.WalkDir(root, func(full string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		path, err := filepath.Rel(root, full)
		if err != nil {
			return err
		}
		path = filepath.ToSlash(path)
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
		if strings.HasSuffix(path, ".s") {
			// Assembly is beyond the parser: a system call
			// instruction in it is a raw system call all the same.
			found, err := asmSyscall(full)
			if err != nil || found == "" {
				return err
			}
			used[kindRaw][path] = true
			if _, ok := mayRawSyscall[path]; !ok {
				findings = append(findings, auditFinding{kindRaw, path,
					fmt.Sprintf("%s: %s (%s) outside the files that may: %s", path, found, kindRaw, auditAdvice[kindRaw])})
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, full, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		checked++
		names, hidden := auditedNames(file)
		for _, imp := range hidden {
			findings = append(findings, auditFinding{kindHidden, path,
				fmt.Sprintf("%s: dot import of %s hides its calls from the audit", fset.Position(imp.Pos()), imp.Path.Value)})
		}
		ast.Inspect(file, func(n ast.Node) bool {
			kind, name := classify(n, names, path)
			if kind == "" {
				return true
			}
			used[kind][path] = true
			if _, ok := auditRegistries[kind][path]; !ok {
				findings = append(findings, auditFinding{kind, path,
					fmt.Sprintf("%s: %s (%s) outside the files that may: %s", fset.Position(n.Pos()), name, kind, auditAdvice[kind])})
			}
			return true
		})
		for _, g := range file.Comments {
			for _, c := range g.List {
				if !strings.HasPrefix(c.Text, "//go:linkname ") {
					continue
				}
				used[kindLinkname][path] = true
				if _, ok := mayLinkname[path]; !ok {
					findings = append(findings, auditFinding{kindLinkname, path,
						fmt.Sprintf("%s: %s outside the files that may: %s", fset.Position(c.Pos()), c.Text, auditAdvice[kindLinkname])})
				}
			}
		}
		return nil
	})
	for kind, reg := range auditRegistries {
		for path, why := range reg {
			if strings.TrimSpace(why) == "" {
				findings = append(findings, auditFinding{kindUnneeded, path, fmt.Sprintf("%s is registered for %s without a reason", path, kind)})
			}
			if !used[kind][path] {
				findings = append(findings, auditFinding{kindUnneeded, path,
					fmt.Sprintf("%s is registered for %s (%q) but makes no such call: remove it", path, kind, why)})
			}
		}
	}
	sort.Slice(findings, func(i, j int) bool { return findings[i].msg < findings[j].msg })
	return findings, checked, err
}

// asmSyscall is the first system call instruction (amd64's SYSCALL,
// arm64's SVC, …) of the assembly file at path, or "".
func asmSyscall(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "//")
		if f := strings.Fields(line); len(f) > 0 && slices.Contains([]string{"SYSCALL", "SVC", "ECALL", "INT"}, f[0]) {
			return f[0], nil
		}
	}
	return "", nil
}

// auditAdvice says, per kind, where such a call belongs.
var auditAdvice = map[string]string{
	kindMutate:   "a mutation by path goes through the confined handle (internal/sandbox/dir.go), or the file is registered in mayMutate with its reason",
	kindOpen:     "an open for writing by path goes through the confined handle (mayMutate)",
	kindMount:    "mounts are the mount layer's (mayMount)",
	kindStart:    "programs start only from the places in mayStart",
	kindRaw:      "a raw system call is registered in mayRawSyscall with what it makes and why",
	kindLinkname: "a reach into the runtime is registered in mayLinkname with what it takes and why",
}

// classify returns the kind of n, a node of a file at path, and the name
// of the call, or "" when n is none the audit looks at. names maps the
// file's names of audited packages to their audit names. A call is its
// function's name; a function of an audited package used as a value
// (f := unix.Unlink) counts as its call, with flags unknown.
func classify(n ast.Node, names map[string]string, path string) (kind, name string) {
	var args []ast.Expr
	switch n := n.(type) {
	case *ast.CompositeLit:
		switch auditedName(n.Type, names) {
		case "exec.Cmd":
			return kindStart, "exec.Cmd{}"
		case "rawinit.Op":
			return kindRaw, "rawinit.Op{}"
		}
		return "", ""
	case *ast.CallExpr:
		name, args = auditedName(n.Fun, names), n.Args
	case *ast.AssignStmt:
		return classifyValues(n.Rhs, names, path)
	case *ast.ValueSpec:
		return classifyValues(n.Values, names, path)
	default:
		return "", ""
	}
	return classifyCall(name, args, true, path)
}

// classifyValues classifies the first function value among exprs.
func classifyValues(exprs []ast.Expr, names map[string]string, path string) (kind, name string) {
	for _, e := range exprs {
		if kind, name := classifyCall(auditedName(e, names), nil, false, path); kind != "" {
			return kind, name + " (as a value)"
		}
	}
	return "", ""
}

// classifyCall is classify's for a call of name with args; known says
// whether args are the call's (false for a function value, which may be
// called with any flags).
func classifyCall(name string, args []ast.Expr, known bool, path string) (kind, _ string) {
	switch {
	case name == "":
		return "", ""
	case isMountCall(name):
		return kindMount, name
	case startCalls[name]:
		return kindStart, name
	case isRawSyscall(name):
		return kindRaw, name
	case openCalls[name] && known && !argsOpenForWriting(args):
		if _, ok := mayOpenToRead[path]; ok {
			return kindOpen, name // a read by handle, or an O_PATH descriptor
		}
		return kindMutate, name
	case openCalls[name] && known:
		return kindMutate, name + " for writing"
	case mutatingCalls[name]:
		return kindMutate, name
	case name == "os.OpenFile" && (!known || len(args) > 1 && opensForWriting(args[1])):
		return kindMutate, name + " for writing"
	}
	return "", ""
}

// auditedNames maps the names file gives the audited packages to their
// audit names (a renamed import of x/sys/unix is still "unix"), and
// returns the dot imports of them, which the audit cannot follow.
func auditedNames(file *ast.File) (map[string]string, []*ast.ImportSpec) {
	names := map[string]string{}
	var hidden []*ast.ImportSpec
	for _, imp := range file.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		audit, ok := auditedPackages[p]
		if !ok {
			continue
		}
		local := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		switch local {
		case ".":
			hidden = append(hidden, imp)
		case "_":
		default:
			names[local] = audit
		}
	}
	return names, hidden
}

// auditedName is e's audit name ("unix.Mount") when e names a function
// (or type) of an audited package, or "".
func auditedName(e ast.Expr, names map[string]string) string {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok || names[pkg.Name] == "" {
		return ""
	}
	return names[pkg.Name] + "." + sel.Sel.Name
}

// TestNoPlainPathMutations audits the product code (auditSources): no
// file outside the confined handle mutates the file system by path or
// opens a file for writing by path; no file but the mount layer's mounts;
// only the places in mayStart start a program; only mayRawSyscall's make
// a raw system call; and every registry entry is still needed.
func TestNoPlainPathMutations(t *testing.T) {
	findings, checked, err := auditSources(harness.RepoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("audited only %d files: the walk is broken", checked)
	}
	for _, f := range findings {
		t.Error(f.msg)
	}
}

// argsOpenForWriting reports whether any argument of an open call (its
// flags, or an OpenHow's) names a write flag.
func argsOpenForWriting(args []ast.Expr) bool {
	for _, a := range args {
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
