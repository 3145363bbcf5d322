package fsops

import (
	"errors"
	"hash"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
)

// streamTo copies the new content from r into dst, the unnamed temp
// file, as fast as the file system takes it, while tail hashes what was
// written by reading it back behind the copy: hashing is slower than the
// page cache, so read back it runs on the other core while the disk
// works. A regular file as the source is copied by the kernel
// (copy_file_range). A failure to read is the input's ("reading the
// content"), a failure to write the disk's.
func streamTo(dst *os.File, r io.Reader, given string, tail *tailHash) (int64, error) {
	if r == nil {
		r = strings.NewReader("")
	}
	var n int64
	var flushed int64
	advance := func(m int64) {
		n += m
		tail.advance(n)
		// Writeback of what is written starts every few MiB, so the disk
		// works while the rest is copied and the final fsync has little
		// left to wait for. Only a hint: a file system without it syncs
		// at the end.
		if n-flushed >= writebackChunk {
			startWriteback(int(dst.Fd()), flushed, n-flushed)
			flushed = n
		}
	}
	if src, ok := r.(*os.File); ok && isRegular(src) {
		for {
			m, err := copyRange(int(src.Fd()), int(dst.Fd()), copyBufferSize)
			if m > 0 {
				advance(int64(m))
				continue
			}
			if err != nil && !kernelCopyUnsupported(err) {
				return n, fserr.FromOS("write", given, os.NewSyscallError("copy_file_range", err))
			}
			// The end, or a pair of files the kernel cannot copy between
			// (or a /proc file, which reports nothing to copy): read
			// and write settle which.
			break
		}
	}
	pooled := copyBuffer()
	defer putCopyBuffer(pooled)
	buf := *pooled
	for {
		m, rerr := io.ReadFull(r, buf)
		if m > 0 {
			if _, err := dst.Write(buf[:m]); err != nil {
				return n, fserr.FromOS("write", given, err)
			}
			advance(int64(m))
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			return n, nil
		}
		if rerr != nil {
			return n, fserr.FromOS("write: reading the content", given, rerr)
		}
	}
}

// kernelCopyUnsupported reports the copy_file_range errors that only mean
// "not for this pair of files": the copy goes on with read and write.
func kernelCopyUnsupported(err error) bool {
	return errors.Is(err, fsys.EXDEV) || errors.Is(err, fsys.EINVAL) ||
		errors.Is(err, fsys.ENOSYS) || errors.Is(err, fsys.EOPNOTSUPP) ||
		errors.Is(err, fsys.EBADF) || errors.Is(err, fsys.EPERM)
}

func isRegular(f *os.File) bool {
	var st fsys.Stat_t
	return fsys.Fstat(int(f.Fd()), &st) == nil && st.Mode&fsys.S_IFMT == fsys.S_IFREG
}

// tailHash hashes a file (and keeps its diff basis) while it is being
// written, reading back from the page cache what the writer has reported
// written. The file must be open for reading and nobody else may write to
// it: it is the writer's own unnamed temp file.
type tailHash struct {
	file  *os.File
	h     hash.Hash
	basis *capped

	written atomic.Int64
	wake    chan struct{} // a token: written has moved
	ended   chan struct{} // closed: written has its final value
	stop    atomic.Bool   // the write failed: stop reading
	done    chan struct{} // closed when the goroutine returns
	err     error         // the read-back's failure, set before done
}

func startTailHash(file *os.File, h hash.Hash, basis *capped) *tailHash {
	t := &tailHash{
		file: file, h: h, basis: basis,
		wake:  make(chan struct{}, 1),
		ended: make(chan struct{}),
		done:  make(chan struct{}),
	}
	go t.run()
	return t
}

func (t *tailHash) run() {
	defer close(t.done)
	pooled := copyBuffer()
	defer putCopyBuffer(pooled)
	buf := *pooled
	var off int64
	for !t.stop.Load() {
		if end := t.written.Load(); off < end {
			m, err := t.file.ReadAt(buf[:min(end-off, int64(len(buf)))], off)
			t.h.Write(buf[:m])
			t.basis.Write(buf[:m])
			off += int64(m)
			if err != nil {
				// The writer reported these bytes written: even EOF
				// means the file lost them.
				t.err = err
				return
			}
			continue
		}
		select {
		case <-t.wake:
		case <-t.ended:
			if off >= t.written.Load() {
				return
			}
		}
	}
}

// advance reports that the first n bytes of the file are written.
func (t *tailHash) advance(n int64) {
	t.written.Store(n)
	select {
	case t.wake <- struct{}{}:
	default: // a wake-up is already pending
	}
}

// finish reports that the writing is over and waits for the hash of all
// of it.
func (t *tailHash) finish() error {
	close(t.ended)
	<-t.done
	return t.err
}

// abort stops the hash of a write that failed and waits for it to stop.
func (t *tailHash) abort() {
	t.stop.Store(true)
	close(t.ended)
	<-t.done
}
