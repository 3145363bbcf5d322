package fsops

import "golang.org/x/sys/unix"

// Linux's calls for what other systems lack or do otherwise; each is a
// hint or a shortcut whose caller goes on without it (os_darwin.go).

// adviseHuge asks for huge pages on a large buffer.
func adviseHuge(m []byte) { _ = unix.Madvise(m, unix.MADV_HUGEPAGE) }

// startWriteback starts writing back n bytes of fd from off.
func startWriteback(fd int, off, n int64) {
	_ = unix.SyncFileRange(fd, off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// copyRange copies up to n bytes from src to dst inside the kernel.
func copyRange(src, dst, n int) (int, error) { return unix.CopyFileRange(src, nil, dst, nil, n, 0) }

// sendFile copies up to n bytes from in to out inside the kernel.
func sendFile(out, in, n int) (int, error) { return unix.Sendfile(out, in, nil, n) }
