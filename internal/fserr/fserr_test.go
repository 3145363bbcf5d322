package fserr

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"
)

func TestFromOSClassifies(t *testing.T) {
	for _, tc := range []struct {
		errno syscall.Errno
		want  Code
	}{
		{syscall.ENOENT, NotFound},
		{syscall.EEXIST, Exists},
		{syscall.ENOSPC, NoSpace},
		{syscall.EDQUOT, NoSpace},
		{syscall.EROFS, Permission},
		{syscall.EACCES, Permission},
		{syscall.EPERM, Permission},
		{syscall.EISDIR, IsDir},
		{syscall.ENOTDIR, NotDir},
		{syscall.EIO, IO},
		// The kernel refused what dsh-fs passed: not the caller's usage.
		{syscall.EINVAL, IO},
		// A name too long for the kernel is the caller's bad input.
		{syscall.ENAMETOOLONG, InvalidArgument},
	} {
		err := FromOS("write", "a.txt", &fs.PathError{Op: "write", Path: "/ws/a.txt", Err: tc.errno})
		if got := CodeOf(err); got != tc.want {
			t.Errorf("%v: code %s, want %s", tc.errno, got, tc.want)
		}
		if want := "write: a.txt: " + tc.errno.Error(); err.Error() != want {
			t.Errorf("%v: message %q, want %q", tc.errno, err, want)
		}
		if !errors.Is(err, tc.errno) {
			t.Errorf("%v: the cause is lost", tc.errno)
		}
	}
}

func TestCodeTravels(t *testing.T) {
	inner := New(Stale, "edit: a.txt: changed")
	wrapped := fmt.Errorf("outer: %w", inner)
	if got := CodeOf(wrapped); got != Stale {
		t.Errorf("CodeOf through %%w = %s, want %s", got, Stale)
	}
	// FromOS keeps an error that already has a code as it is.
	if got := FromOS("write", "a.txt", wrapped); got != wrapped {
		t.Errorf("FromOS re-wrapped a coded error: %v", got)
	}
	if FromOS("write", "a.txt", nil) != nil {
		t.Error("FromOS(nil) is not nil")
	}
	// An error nobody gave a code shows up as FS_IO.
	if got := CodeOf(errors.New("mystery")); got != IO {
		t.Errorf("uncoded error: %s, want %s", got, IO)
	}
	le := &os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EXDEV}
	if got := FromOS("write", "b", le).Error(); got != "write: b: "+syscall.EXDEV.Error() {
		t.Errorf("link error message %q", got)
	}
}
