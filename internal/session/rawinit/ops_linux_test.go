package rawinit

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// openHow is the bytes of openat2's how for an O_PATH open that follows
// no symlink.
func openHow() Arg {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	return Bytes(unsafe.Slice((*byte)(unsafe.Pointer(&how)), unsafe.Sizeof(how)))
}

// openOp opens path into register reg, without following a symlink.
func openOp(path string, reg int) Op {
	o := Call(unix.SYS_OPENAT2, Int(unix.AT_FDCWD), Str(path), openHow(),
		Word(unsafe.Sizeof(unix.OpenHow{})))
	o.Result, o.Words, o.Changed = reg, "open "+path, unix.ELOOP
	return o
}

// tmpfsOps mount an empty tmpfs on the folder dir: by the new mount API
// (newAPI), else by mount(2) on its /proc/self/fd path.
func tmpfsOps(dir string, newAPI bool) []Op {
	ops := []Op{openOp(dir, 0), {Kind: OpCheck, Reg: 0, Types: TypeSet(unix.S_IFDIR), Words: "check " + dir}}
	if !newAPI {
		return append(ops, Call(unix.SYS_MOUNT, Str("tmpfs"), ProcFD(0), Str("tmpfs"), Word(0), Str("size=4k")))
	}
	fsopen := Call(unix.SYS_FSOPEN, Str("tmpfs"), Word(unix.FSOPEN_CLOEXEC))
	fsopen.Result = 1
	fsmount := Call(unix.SYS_FSMOUNT, Reg(1), Word(unix.FSMOUNT_CLOEXEC), Word(0))
	fsmount.Result = 2
	return append(ops, fsopen, Call(unix.SYS_FSCONFIG, Reg(1), Word(unix.FSCONFIG_CMD_CREATE), Word(0), Word(0), Word(0)),
		fsmount, Op{Kind: OpClose, Reg: 1},
		Call(unix.SYS_MOVE_MOUNT, Reg(2), Str(""), Reg(0), Str(""), Word(unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)))
}

// TestOps: ops run in the first process's mount namespace before CMD,
// passing descriptors through registers, by the new mount API and by a
// /proc/self/fd path; CMD sees the mount and none of the registers'
// descriptors; the caller's namespace sees nothing.
func TestOps(t *testing.T) {
	needRoot(t)
	for _, newAPI := range []bool{true, false} {
		t.Run(map[bool]string{true: "new API", false: "classic mount"}[newAPI], func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "seen"), nil, 0o644)
			s, out := shell(t, "ls -A "+dir+"; echo; ls /proc/self/fd")
			s.Clone, s.Ops = unix.CLONE_NEWNS, tmpfsOps(dir, newAPI)
			got, status, _ := run(t, s, out)
			if status != 0 || got != "\n0\n1\n2\n3\n" {
				t.Errorf("CMD said %q, status %d: want an empty folder and only its own descriptors", got, status)
			}
			if _, err := os.Stat(filepath.Join(dir, "seen")); err != nil {
				t.Errorf("the caller's namespace: %v", err)
			}
		})
	}
}

// TestOpsFail: a failing op ends the first process before CMD, and its
// error names the op by the caller's words: a symlink where a folder
// was planned says the path changed, a check of its type says its words.
func TestOpsFail(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	os.Symlink("/", filepath.Join(dir, "link"))
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	for _, tc := range []struct {
		name, path string
		op         int
		want       string
	}{
		{"symlink", filepath.Join(dir, "link"), 0, "open " + dir + "/link: changed since the plan: too many levels of symbolic links"},
		{"file", filepath.Join(dir, "file"), 1, "check " + dir + "/file"},
		{"missing", filepath.Join(dir, "none"), 0, "open " + dir + "/none: no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := shell(t, "touch "+dir+"/ran")
			s.Clone, s.Ops = unix.CLONE_NEWNS, tmpfsOps(tc.path, true)
			p, err := startIn(t, s, nil)
			var opErr *OpError
			if p != nil || !errors.As(err, &opErr) || opErr.Op != tc.op || err.Error() != tc.want || fserr.CodeOf(err) != fserr.IO {
				t.Fatalf("Start = %v, %v; want op %d failing with %q", p, err, tc.op, tc.want)
			}
			if _, err := os.Stat(dir + "/ran"); err == nil {
				t.Error("CMD ran")
			}
		})
	}
}

// TestOpsSkip: an errno an op expects skips the ops after it, and only
// those: a missing path skips its mount, the next op still runs.
func TestOpsSkip(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "d", "seen"), nil, 0o644)
	missing := openOp(filepath.Join(dir, "gone"), 0)
	missing.SkipOn, missing.Skip = unix.ENOENT, 1
	ops := append([]Op{missing, Call(unix.SYS_CLOSE, Word(^uintptr(0)))}, tmpfsOps(filepath.Join(dir, "d"), true)...)
	s, out := shell(t, "ls -A "+dir+"/d")
	s.Clone, s.Ops = unix.CLONE_NEWNS, ops
	if got, status, _ := run(t, s, out); status != 0 || got != "" {
		t.Errorf("CMD said %q, status %d: want the folder covered", got, status)
	}
	// Not skipped: the close of no descriptor fails.
	missing.SkipOn, missing.Skip = unix.EEXIST, 0
	s, _ = shell(t, "true")
	s.Clone, s.Ops = unix.CLONE_NEWNS, []Op{missing}
	if _, err := startIn(t, s, nil); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("an errno not skipped: %v", err)
	}
}

// TestOpsRefused: ops that name no register, skip past the end or store
// where no op's memory is (aligned) are refused before the fork.
func TestOpsRefused(t *testing.T) {
	bad := Call(unix.SYS_CLOSE, Reg(MaxRegisters))
	skip := Call(unix.SYS_CLOSE, Word(0))
	skip.Skip = 1
	store := []Op{{Kind: OpStore, Reg: 0, Into: At{Op: 1, Arg: 0, Offset: 2}}, Call(unix.SYS_CLOSE, Bytes(make([]byte, 8)))}
	for _, ops := range [][]Op{{bad}, {skip}, {{Kind: OpCheck, Reg: -1}}, {{Kind: 9}}, store} {
		s, _ := shell(t, "true")
		s.Ops = ops
		if _, err := Start(s); fserr.CodeOf(err) != fserr.InvalidArgument || !strings.Contains(err.Error(), "op 0") {
			t.Errorf("Start(%v) = %v, want an invalid op 0", ops, err)
		}
	}
}

// TestOpsStore: a register's value stored into another op's memory is
// what that op passes: here the descriptor an open made, written to the
// caller's pipe ahead of CMD's output.
func TestOpsStore(t *testing.T) {
	needRoot(t)
	s, out := shell(t, "echo cmd")
	buf := make([]byte, 8)
	write := Call(syscall.SYS_WRITE, Int(s.Files[1]), Bytes(buf), Word(uintptr(len(buf))))
	write.Words = "write"
	s.Clone, s.Ops = unix.CLONE_NEWNS, []Op{openOp("/", 0), {Kind: OpStore, Reg: 0, Into: At{Op: 2, Arg: 1, Offset: 4}}, write}
	got, status, _ := run(t, s, out)
	if status != 0 || len(got) != 12 || got[8:] != "cmd\n" {
		t.Fatalf("CMD said %q, status %d", got, status)
	}
	fd := int32(binary.NativeEndian.Uint32([]byte(got[4:8])))
	if got[:4] != "\x00\x00\x00\x00" || fd < 3 {
		t.Errorf("the stored value: % x, want a descriptor at byte 4", got[:8])
	}
}

// TestOpsEmpty: a check with Empty refuses a file that is not empty.
func TestOpsEmpty(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "full"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644)
	for name, want := range map[string]bool{"full": false, "empty": true} {
		s, _ := shell(t, "true")
		check := Op{Kind: OpCheck, Reg: 0, Types: TypeSet(unix.S_IFREG), Empty: true, Words: "check " + name}
		s.Clone, s.Ops = unix.CLONE_NEWNS, []Op{openOp(filepath.Join(dir, name), 0), check}
		p, err := startIn(t, s, nil)
		if p != nil {
			p.Wait()
		}
		if (err == nil) != want || err != nil && err.Error() != "check "+name {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestOpsSendAndFromReg: a descriptor the ops opened reaches the caller
// over a socket (OpSend), and another becomes CMD's standard input
// (FromReg); neither is left to CMD otherwise.
func TestOpsSendAndFromReg(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in"), []byte("from the ops\n"), 0o644)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	s, out := shell(t, "cat; ls /proc/self/fd")
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC}
	open := Call(unix.SYS_OPENAT2, Int(unix.AT_FDCWD), Str(filepath.Join(dir, "in")),
		Bytes(unsafe.Slice((*byte)(unsafe.Pointer(&how)), unsafe.Sizeof(how))), Word(unsafe.Sizeof(how)))
	open.Result = 0
	s.Clone, s.Ops = unix.CLONE_NEWNS, []Op{open, Send(0, Int(fds[1]), 'x', "send")}
	s.Files[0] = FromReg(0)
	got, status, _ := run(t, s, out)
	unix.Close(fds[1])
	if status != 0 || got != "from the ops\n0\n1\n2\n3\n" {
		t.Errorf("CMD said %q, status %d", got, status)
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(fds[0], buf, oob, 0)
	if err != nil || n != 1 || buf[0] != 'x' {
		t.Fatalf("received %d bytes %q: %v", n, buf, err)
	}
	msgs, _ := unix.ParseSocketControlMessage(oob[:oobn])
	if len(msgs) != 1 {
		t.Fatalf("received %d control messages", len(msgs))
	}
	rights, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(rights) != 1 {
		t.Fatalf("rights %v: %v", rights, err)
	}
	f := os.NewFile(uintptr(rights[0]), "sent")
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Name() != "sent" && fi.Size() != 13 {
		t.Errorf("the sent descriptor: %v %v", fi, err)
	}
}
