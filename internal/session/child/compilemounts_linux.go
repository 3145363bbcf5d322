package child

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/rawinit"
)

// Each of these compiles the applyFiles step of the same name (mounts.go,
// overlay.go, readview.go, rotree.go, sockets.go, runtime.go); a comment
// says where they differ.

// bindReadOnly is bindReadOnly with the modern API: src -1 binds the
// target over itself.
func (c *compiler) bindReadOnly(src int, target string, notType uint32, words string) {
	c.openTarget(regTarget, target, notType, words)
	if src < 0 {
		src = regTarget
	}
	c.cloneTree(regTree, src, true, words)
	c.setattr(regTree, unix.AT_RECURSIVE, unix.MOUNT_ATTR_RDONLY, words)
	c.moveMount(regTree, regTarget, words)
	c.close(regTree)
	c.close(regTarget)
}

// pin is pin.
func (c *compiler) pin(path string) {
	words := "mount: pin " + path
	c.openTarget(regTarget, path, unix.S_IFREG, words)
	c.cloneTree(regTree, regTarget, true, words)
	c.moveMount(regTree, regTarget, words)
	c.close(regTree)
	c.close(regTarget)
}

// pinLink is pinLink: the link opened as kernel.OpenNoSymlinks opens
// (openat2, RESOLVE_NO_SYMLINKS) with O_NOFOLLOW, which gives the final
// link itself.
func (c *compiler) pinLink(path string) {
	words := "mount: pin symlink " + path
	c.open(regTarget, path, unix.O_NOFOLLOW, words)
	c.check(regTarget, rawinit.TypeSet(unix.S_IFLNK), words)
	c.cloneTree(regTree, regTarget, true, words)
	c.moveMount(regTree, regTarget, words)
	c.close(regTree)
	c.close(regTarget)
}

// tmpfs makes a detached tmpfs mount into regMount, with the options
// opts and the mount attributes attrs.
func (c *compiler) tmpfs(opts [][2]string, attrs uintptr, words string) {
	c.into(regFS, words+": fsopen", unix.SYS_FSOPEN, rawinit.Str("tmpfs"), rawinit.Word(unix.FSOPEN_CLOEXEC))
	for _, kv := range opts {
		c.call(words+": fsconfig "+kv[0], unix.SYS_FSCONFIG, rawinit.Reg(regFS), rawinit.Word(unix.FSCONFIG_SET_STRING),
			rawinit.Str(kv[0]), rawinit.Str(kv[1]), rawinit.Word(0))
	}
	c.call(words+": fsconfig create", unix.SYS_FSCONFIG, rawinit.Reg(regFS), rawinit.Word(unix.FSCONFIG_CMD_CREATE))
	c.into(regMount, words+": fsmount", unix.SYS_FSMOUNT, rawinit.Reg(regFS), rawinit.Word(unix.FSMOUNT_CLOEXEC), rawinit.Word(attrs))
	c.close(regFS)
}

// hideDir is hideDir.
func (c *compiler) hideDir(path string) {
	words := "mount: hide " + path
	c.openTarget(regTarget, path, unix.S_IFREG, words)
	c.tmpfs([][2]string{{"size", "4k"}, {"mode", "0500"}},
		unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, words)
	c.moveMount(regMount, regTarget, words)
	c.close(regMount)
	c.close(regTarget)
}

// hideSocket is hideSocket: a socket gone since the plan skips the rest
// of its ops.
func (c *compiler) hideSocket(path string) {
	words := "mount: hide socket " + path
	open := len(c.ops)
	c.open(regTarget, path, 0, words)
	c.check(regTarget, rawinit.TypeSet(unix.S_IFSOCK), words)
	c.cloneTree(regTree, regEmpty, false, words)
	c.setattr(regTree, 0, unix.MOUNT_ATTR_RDONLY, words)
	c.moveMount(regTree, regTarget, words)
	c.close(regTree)
	c.close(regTarget)
	c.ops[open].SkipOn, c.ops[open].Skip = unix.ENOENT, len(c.ops)-open-1
}

// fsconfig sets the string key of the file system being made.
func (c *compiler) fsconfig(key string, value rawinit.Arg, words string) *rawinit.Op {
	return c.call(words+": fsconfig "+key, unix.SYS_FSCONFIG, rawinit.Reg(regFS), rawinit.Word(unix.FSCONFIG_SET_STRING),
		rawinit.Str(key), value, rawinit.Word(0))
}

// overlay is MountOverlay. "lowerdir+" or "lowerdir" is chosen by the
// kernel's release here, where MountOverlay tries the one then the
// other; an option the kernel lacks (volatile, metacopy: EINVAL) is left
// out there as here.
func (c *compiler) overlay(o plan.Overlay) {
	words := "mount: overlay " + o.Path
	c.openTarget(regTarget, o.Path, unix.S_IFREG, words)
	c.into(regFS, words+": fsopen overlay", unix.SYS_FSOPEN, rawinit.Str("overlay"), rawinit.Word(unix.FSOPEN_CLOEXEC))
	lower := "lowerdir"
	if lowerdirPlus() {
		lower = "lowerdir+"
	}
	c.fsconfig(lower, rawinit.ProcFD(regTarget), words)
	c.fsconfig("upperdir", rawinit.Str(o.Upper), words)
	c.fsconfig("workdir", rawinit.Str(o.Work), words)
	flag := func(key string) *rawinit.Op {
		return c.call(words+": fsconfig "+key, unix.SYS_FSCONFIG, rawinit.Reg(regFS), rawinit.Word(unix.FSCONFIG_SET_FLAG),
			rawinit.Str(key), rawinit.Word(0), rawinit.Word(0))
	}
	flag("volatile").SkipOn = unix.EINVAL
	if c.userns {
		flag("userxattr")
	} else {
		c.fsconfig("metacopy", rawinit.Str("on"), words).SkipOn = unix.EINVAL
	}
	c.call(words+": overlay", unix.SYS_FSCONFIG, rawinit.Reg(regFS), rawinit.Word(unix.FSCONFIG_CMD_CREATE))
	c.into(regMount, words+": fsmount overlay", unix.SYS_FSMOUNT, rawinit.Reg(regFS), rawinit.Word(unix.FSMOUNT_CLOEXEC),
		rawinit.Word(unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOSUID))
	c.close(regFS)
	c.moveMount(regMount, regTarget, words)
	c.close(regMount)
	c.close(regTarget)
}

// readOnlyTree is readOnlyTree: which writable folders exist is decided
// here.
func (c *compiler) readOnlyTree(writable []string) error {
	dirs := slices.Clone(writable)
	for _, d := range kernelWritableExtra {
		if e, err := filepath.EvalSymlinks(d); err == nil {
			dirs = append(dirs, e)
		}
	}
	dirs = slices.Compact(slices.Sorted(slices.Values(existingDirs(dirs))))
	if len(dirs) > maxClones {
		return fmt.Errorf("mount: read-only tree: %d writable folders, more than %d", len(dirs), maxClones)
	}
	for i, d := range dirs {
		words := "mount: clone writable root " + d
		c.openTarget(regTarget, d, unix.S_IFREG, words)
		c.cloneTree(regClones+i, regTarget, true, words)
		c.close(regTarget)
		c.setattr(regClones+i, unix.AT_RECURSIVE, unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOSUID, "mount: nodev,nosuid "+d)
	}
	attr, size := mountAttr(unix.MOUNT_ATTR_RDONLY)
	c.call("mount: read-only tree /: mount_setattr", unix.SYS_MOUNT_SETATTR, rawinit.Int(unix.AT_FDCWD), rawinit.Str("/"),
		rawinit.Word(unix.AT_RECURSIVE), attr, size)
	for i, d := range dirs {
		words := "mount: bind writable root " + d
		c.openTarget(regTarget, d, unix.S_IFREG, words)
		c.moveMount(regClones+i, regTarget, words)
		c.close(regTarget)
		c.close(regClones + i)
	}
	return nil
}

// view is applyView: each kept path's type is taken here, and checked
// there on what is cloned.
func (c *compiler) view(v *plan.ReadView) error {
	if len(v.Kept) > maxClones {
		return fmt.Errorf("mount: read view: %d kept paths, more than %d", len(v.Kept), maxClones)
	}
	dirs := make([]bool, len(v.Kept))
	for i, k := range v.Kept {
		fi, err := os.Lstat(k)
		if err != nil {
			return fmt.Errorf("mount: read view: keep %s: %w", k, err)
		}
		dirs[i] = fi.IsDir()
		words := "mount: read view: keep " + k
		c.open(regKept, k, 0, words)
		c.check(regKept, rawinit.TypeSet(typeOf(fi)), words)
		c.cloneTree(regClones+i, regKept, true, "mount: read view: clone "+k)
		c.close(regKept)
	}
	for _, cv := range v.Covered {
		c.cover(v, cv, dirs)
	}
	for i := range v.Kept {
		c.close(regClones + i)
	}
	return nil
}

// typeOf is the S_IF* type of what fi describes.
func typeOf(fi os.FileInfo) uint32 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Mode & unix.S_IFMT
	}
	return unix.S_IFDIR
}

// cover is cover: the folders it makes in the view's tmpfs by their
// paths (os.MkdirAll's), EEXIST no failure.
func (c *compiler) cover(v *plan.ReadView, cv string, dirs []bool) {
	words := "mount: read view " + cv
	c.openTarget(regTarget, cv, unix.S_IFREG, words)
	c.tmpfs([][2]string{{"size", "64k"}, {"mode", "0755"}}, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC, words)
	c.moveMount(regMount, regTarget, words)
	mkdirs := func(dir string) {
		var chain []string
		for d := dir; d != cv && beneath(cv, d); d = filepath.Dir(d) {
			chain = append(chain, d)
		}
		for _, d := range slices.Backward(chain) {
			o := c.call(words+": mkdir "+d, unix.SYS_MKDIRAT, rawinit.Int(unix.AT_FDCWD), rawinit.Str(d), rawinit.Word(0o755))
			o.SkipOn = unix.EEXIST
		}
	}
	if v.Home != "" && beneath(cv, v.Home) {
		mkdirs(v.Home)
	}
	for i, k := range v.Kept {
		if !beneath(cv, k) {
			continue
		}
		mkdirs(filepath.Dir(k))
		if dirs[i] {
			mkdirs(k)
		} else {
			c.into(regKept, words+": create "+k, unix.SYS_OPENAT, rawinit.Int(unix.AT_FDCWD), rawinit.Str(k),
				rawinit.Word(unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC), rawinit.Word(0o644))
			c.close(regKept)
		}
		c.open(regKept, k, 0, words+": "+k)
		c.moveMount(regClones+i, regKept, words+": bind back "+k)
		c.close(regKept)
	}
	c.setattr(regMount, 0, unix.MOUNT_ATTR_RDONLY, words)
	c.close(regMount)
	c.close(regTarget)
}

// hideRuntime is hideRuntime: whether the denial log's folder exists is
// decided here.
func (c *compiler) hideRuntime(base, record string) error {
	words := "mount: hide " + base
	rel, err := filepath.Rel(base, record)
	// filepath.IsLocal as well: hideRuntime's own check lets "../x" by.
	if err != nil || !filepath.IsLocal(rel) || filepath.Dir(filepath.Dir(rel)) != "." || filepath.Dir(rel) == "." {
		return fmt.Errorf("%s: the record %s is not in a session folder of %s", words, record, base)
	}
	logRel := filepath.Join(filepath.Dir(rel), plan.DenialsFolder)
	fi, err := os.Lstat(filepath.Join(base, logRel))
	hasLog := err == nil && fi.IsDir()
	c.open(regRecord, record, 0, words+": open the record")
	if hasLog {
		c.open(regLog, filepath.Join(base, logRel), unix.O_DIRECTORY, words)
	}
	c.openTarget(regTarget, base, unix.S_IFREG, words)
	c.call(words+": tmpfs", unix.SYS_MOUNT, rawinit.Str("tmpfs"), rawinit.ProcFD(regTarget), rawinit.Str("tmpfs"),
		rawinit.Word(unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC), rawinit.Str("size=16k,mode=0700"))
	c.close(regTarget)
	c.open(regBase, base, unix.O_DIRECTORY, words)
	c.call(words+": mkdir", unix.SYS_MKDIRAT, rawinit.Reg(regBase), rawinit.Str(filepath.Dir(rel)), rawinit.Word(0o700))
	c.into(regTarget, words+": create", unix.SYS_OPENAT, rawinit.Reg(regBase), rawinit.Str(rel),
		rawinit.Word(unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC), rawinit.Word(0o400))
	c.close(regTarget)
	c.bindReadOnly(regRecord, record, unix.S_IFDIR, words+": bind the record")
	if hasLog {
		c.call(words+": mkdir", unix.SYS_MKDIRAT, rawinit.Reg(regBase), rawinit.Str(logRel), rawinit.Word(0o700))
		c.bindReadOnly(regLog, filepath.Join(base, logRel), unix.S_IFREG, words+": bind the denial log")
	}
	c.call(words+": remount read-only", unix.SYS_MOUNT, rawinit.Str(""), rawinit.ProcFD(regBase), rawinit.Str(""),
		rawinit.Word(unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC), rawinit.Word(0))
	c.close(regBase)
	c.close(regRecord)
	c.close(regLog)
	return nil
}
