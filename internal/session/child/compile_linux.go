package child

// The plan's Files compiled (CompileFiles) into ops a first process made
// of raw system calls runs (rawinit.Spec.Ops): the same mounts, in the
// same order, as applyFiles makes with the modern mount API, with no Go
// code after the fork. What applyFiles decides at run time from the
// host's state is decided here, on the host: the kernel's support, which
// writable folders exist, the read view's kept paths' types (then
// checked again), the denial log's folder, the working folder. What it
// checks in the session's namespace stays a check there: every target
// is opened by openat2 with RESOLVE_NO_SYMLINKS (a symlink swapped in
// fails as changed since the plan) and its type checked on the
// descriptor, and a socket gone since the plan is skipped.

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/rawinit"
)

// The registers of the compiled ops: a mount point, a tree or source, a
// file system being made and its mount, the empty file, the runtime
// folder's root, the record and the denial log, a kept path of the
// read view; the clones of the read view and the read-only tree after.
const (
	regTarget = iota
	regTree
	regFS
	regMount
	regEmpty
	regBase
	regRecord
	regLog
	regKept
	regClones
)

// maxClones bounds the read view's kept paths and the read-only tree's
// writable folders: each clone is held in a register until attached.
const maxClones = rawinit.MaxRegisters - regClones

// ErrNoMountAPI is CompileFiles' error on a kernel without the modern
// mount API (mount_setattr, Linux 5.12): the Go applier (applyFiles,
// with its classic mount(2) path) makes the mounts there.
var ErrNoMountAPI = errors.New("this kernel has no mount_setattr (Linux 5.12): the mounts are made by the Go applier")

// mountAPIWhy probes the modern mount API once, as layout.ReadOnlyTree
// does: mount_setattr with an unknown flag is EINVAL on a kernel that
// has it (and open_tree, move_mount, fsopen, fsmount and openat2, all
// older), before any check of privilege.
var mountAPIWhy = sync.OnceValue(func() error {
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", 1<<30, &unix.MountAttr{}); !errors.Is(err, unix.EINVAL) {
		return ErrNoMountAPI
	}
	return nil
})

// lowerdirPlus reports whether overlayfs takes "lowerdir+" (Linux 6.8),
// by the kernel's release: a probe would need a mount namespace of its
// own.
var lowerdirPlus = sync.OnceValue(func() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	var ma, mi int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &ma, &mi)
	return ma > 6 || ma == 6 && mi >= 8
})

// FilesTarget is where and how the compiled ops run: the emptyFile
// applyFiles is given, the working folder the first process is in (""
// for none to enter again), and whether they run in a user namespace of
// their own (the overlays' userxattr).
type FilesTarget struct {
	EmptyFile     string
	Dir           string
	UserNamespace bool
}

// CompileFiles compiles m into the ops a rawinit first process runs in
// its private mount namespace (rawinit.Spec.Ops) before its layers: the
// same mounts, in the same order, as applyFiles, each op's Words those
// of applyFiles' error ("mount: hide /x: open_tree"), to which the
// caller adds "mount layer: " as Run does. It never mounts anything
// here. On a kernel without the modern mount API it is ErrNoMountAPI
// (errors.Is; fserr.IO): the Go applier is kept for that case.
func CompileFiles(m *plan.Files, t FilesTarget) ([]rawinit.Op, error) {
	if err := mountAPIWhy(); err != nil {
		return nil, fserr.Wrap(fserr.IO, err.Error(), err)
	}
	c := &compiler{userns: t.UserNamespace, ops: make([]rawinit.Op, 0, opsFor(m))}
	if err := c.files(m, t); err != nil {
		return nil, fserr.Wrap(fserr.IO, err.Error(), err)
	}
	return c.ops, nil
}

// opsFor is about how many ops files compiles for m: a bind is about
// seven (open, check, clone, setattr, move, closes). An Op is 344 bytes:
// grown by doubling, a plan's hundred or so ops copied themselves over
// twice their size of fresh pages, a page fault each, on an ordinary
// user's start path. A short estimate only grows the slice again.
func opsFor(m *plan.Files) int {
	paths := len(m.Pinned) + len(m.PinnedLinks) + len(m.ReadOnly) + len(m.Hidden) + len(m.HiddenFiles) + len(m.HiddenSockets) +
		len(m.Overlays) + len(m.Writable)
	return 8*paths + 64
}

// compiler gathers the ops.
type compiler struct {
	ops    []rawinit.Op
	userns bool
}

// files is applyFiles' order.
func (c *compiler) files(m *plan.Files, t FilesTarget) error {
	if len(m.HiddenFiles)+len(m.HiddenSockets) > 0 {
		if err := c.emptyFile(t.EmptyFile); err != nil {
			return err
		}
	}
	if m.OverlayMemory > 0 {
		// A root session's, whose plan the thread applies (Apply).
		return errors.New("the overlays' tmpfs is not compiled")
	}
	writable := slices.Clip(m.Writable)
	for _, o := range m.Overlays {
		c.overlay(o)
		writable = append(writable, o.Path)
	}
	if m.View != nil {
		if err := c.view(m.View); err != nil {
			return err
		}
	}
	if m.OutsideReadOnly {
		if err := c.readOnlyTree(writable); err != nil {
			return err
		}
	}
	for _, p := range m.Pinned {
		c.pin(p)
	}
	for _, p := range m.PinnedLinks {
		c.pinLink(p)
	}
	for _, p := range m.ReadOnly {
		c.bindReadOnly(-1, p, 0, "mount: bind read-only "+p)
	}
	for _, p := range m.Hidden {
		c.hideDir(p)
	}
	for _, p := range m.HiddenFiles {
		c.bindReadOnly(regEmpty, p, unix.S_IFDIR, "mount: hide "+p)
	}
	if m.OverlayDir != "" {
		c.hideDir(m.OverlayDir)
	}
	for _, s := range m.HiddenSockets {
		c.hideSocket(s)
	}
	if m.Runtime != "" {
		if err := c.hideRuntime(m.Runtime, m.Record); err != nil {
			return err
		}
	}
	if t.Dir != "" {
		c.call("mount: enter the working folder "+t.Dir, unix.SYS_CHDIR, rawinit.Str(t.Dir))
	}
	return nil
}

// call adds the system call nr with args, its result not kept.
func (c *compiler) call(words string, nr uintptr, args ...rawinit.Arg) *rawinit.Op {
	o := rawinit.Call(nr, args...)
	o.Words = words
	c.ops = append(c.ops, o)
	return &c.ops[len(c.ops)-1]
}

// into adds the system call nr whose result goes to register reg.
func (c *compiler) into(reg int, words string, nr uintptr, args ...rawinit.Arg) *rawinit.Op {
	o := c.call(words, nr, args...)
	o.Result = reg
	return o
}

func (c *compiler) close(reg int) {
	c.ops = append(c.ops, rawinit.Op{Kind: rawinit.OpClose, Reg: reg, Words: "close"})
}

// open opens path into reg as kernel.OpenNoSymlinks does, O_PATH and
// flags: a symlink anywhere on it fails as changed since the plan.
func (c *compiler) open(reg int, path string, flags uint64, words string) *rawinit.Op {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC | flags, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	o := c.into(reg, words, unix.SYS_OPENAT2, rawinit.Int(unix.AT_FDCWD), rawinit.Str(path),
		rawinit.Bytes(unsafe.Slice((*byte)(unsafe.Pointer(&how)), unsafe.Sizeof(how))), rawinit.Word(unsafe.Sizeof(how)))
	o.Changed = unix.ELOOP
	return o
}

// check requires the descriptor in reg to be one of types.
func (c *compiler) check(reg int, types rawinit.Types, words string) {
	c.ops = append(c.ops, rawinit.Op{Kind: rawinit.OpCheck, Reg: reg, Types: types, Words: words + ": changed since the plan"})
}

// openTarget is applyFiles' openTarget: path opened into reg, a folder
// or a regular file but not of type notType. Where openTarget says "not
// a folder or a regular file" (a fifo, a device), the check says
// "changed since the plan": one check op, one set of words.
func (c *compiler) openTarget(reg int, path string, notType uint32, words string) {
	c.open(reg, path, 0, words)
	var types []uint32
	for _, t := range []uint32{unix.S_IFDIR, unix.S_IFREG} {
		if t != notType {
			types = append(types, t)
		}
	}
	c.check(reg, rawinit.TypeSet(types...), words)
}

// mountAttr is the argument of mount_setattr setting attrs.
func mountAttr(attrs uint64) (rawinit.Arg, rawinit.Arg) {
	a := unix.MountAttr{Attr_set: attrs}
	return rawinit.Bytes(unsafe.Slice((*byte)(unsafe.Pointer(&a)), unsafe.Sizeof(a))), rawinit.Word(unsafe.Sizeof(a))
}

// setattr sets attrs on the mount (or detached tree) in reg.
func (c *compiler) setattr(reg int, flags uintptr, attrs uint64, words string) {
	attr, size := mountAttr(attrs)
	c.call(words+": mount_setattr", unix.SYS_MOUNT_SETATTR, rawinit.Reg(reg), rawinit.Str(""),
		rawinit.Word(unix.AT_EMPTY_PATH|flags), attr, size)
}

// cloneTree clones the mounts at the descriptor in src into dst,
// recursively or not.
func (c *compiler) cloneTree(dst, src int, recursive bool, words string) {
	flags := uintptr(unix.OPEN_TREE_CLONE | unix.OPEN_TREE_CLOEXEC | unix.AT_EMPTY_PATH)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	c.into(dst, words+": open_tree", unix.SYS_OPEN_TREE, rawinit.Reg(src), rawinit.Str(""), rawinit.Word(flags))
}

// moveMount attaches the mount in from on the descriptor in to.
func (c *compiler) moveMount(from, to int, words string) {
	c.call(words+": move_mount", unix.SYS_MOVE_MOUNT, rawinit.Reg(from), rawinit.Str(""), rawinit.Reg(to), rawinit.Str(""),
		rawinit.Word(unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH))
}

// emptyFile opens applyFiles' empty file into regEmpty: an empty
// regular file here, and again there, as applyFiles checks it.
func (c *compiler) emptyFile(path string) error {
	words := "mount: open empty file " + path
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
		return fmt.Errorf("%s: not an empty regular file", words)
	}
	c.open(regEmpty, path, 0, words)
	c.ops = append(c.ops, rawinit.Op{Kind: rawinit.OpCheck, Reg: regEmpty, Types: rawinit.TypeSet(unix.S_IFREG), Empty: true,
		Words: words + ": not an empty regular file"})
	return nil
}
