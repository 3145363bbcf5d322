package fsops

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// hugeLoadMin is the size from which a file is loaded into memory of its
// own, mapped for huge pages: 64 MiB in 4 KiB pages costs 16,000 page
// faults, in 2 MiB pages 32, and the faults, not the copy, dominated the
// time of a large edit (bench/results.md).
const hugeLoadMin = 4 << 20

// loaded is a whole file in memory, held once.
type loaded struct {
	data   []byte
	mapped []byte // the mapping behind data, to unmap; nil for Go memory
}

// release gives the memory back. data must not be used afterwards.
func (l *loaded) release() {
	if l.mapped != nil {
		unmapAnon(l.mapped)
		l.mapped = nil
	}
	l.data = nil
}

// loadFile reads the whole of file, whose size was size when it was
// opened, in one allocation. A file that grew meanwhile (a program that
// does not take the lock) is still read whole.
func loadFile(file *os.File, size int64, given string) (*loaded, error) {
	room := int(size) + bytes.MinRead
	l := &loaded{}
	buf := []byte(nil)
	if size >= hugeLoadMin {
		m, err := mapAnon(room)
		if err == nil {
			adviseHuge(m) // a hint: no huge pages is only slower
			l.mapped, buf = m, m
		}
	}
	if buf == nil {
		buf = make([]byte, room)
	}
	n, err := io.ReadFull(file, buf)
	switch {
	case err == nil:
		// Filled to the brim: the file grew. Go on in Go memory.
		var b bytes.Buffer
		b.Write(buf)
		l.release()
		if _, err := b.ReadFrom(file); err != nil {
			return nil, fserr.FromOS("read", given, err)
		}
		l.data = b.Bytes()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		l.data = buf[:n]
	default:
		l.release()
		return nil, fserr.FromOS("read", given, err)
	}
	return l, nil
}
