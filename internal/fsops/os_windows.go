package fsops

import (
	"errors"

	"github.com/dshfs/dsh-fs/internal/fsys"
)

// Windows has none of Linux's copy, writeback and mapping shortcuts
// (os_linux.go, mmap_unix.go): each answers so that its caller copies
// through user memory, or loads into Go's.

func adviseHuge([]byte) {}

func startWriteback(int, int64, int64) {}

// copyRange copies nothing: the end of the kernel's part, so read and
// write copy it all.
func copyRange(int, int, int) (int, error) { return 0, nil }

// sendFile refuses, so the caller copies.
func sendFile(int, int, int) (int, error) { return 0, fsys.ENOTSUP }

// mapAnon refuses: a large file is loaded into Go's memory.
func mapAnon(int) ([]byte, error) { return nil, errors.ErrUnsupported }

func unmapAnon([]byte) {}
