package wire

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/memo"
)

// Remember hands content, a whole file a read of the session returned,
// to the supervisor over the channel fd, one way: in a sealed memfd (it
// can change no more, and the supervisor can tell it is one), behind a
// memoMark. It never blocks: a full queue remembers nothing. It is queued
// before any request sent after it and taken in that order, so a later
// recall finds it. An error means nothing was sent: the read goes on.
func Remember(fd int, content []byte) error {
	if len(content) > memo.ItemMax {
		return errors.New("too large to remember")
	}
	if err := CheckBroker(fd); err != nil {
		return err
	}
	mfd, err := unix.MemfdCreate("dsh-fs-memo", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return err
	}
	defer unix.Close(mfd)
	for rest := content; len(rest) > 0; {
		n, err := unix.Write(mfd, rest)
		if err != nil {
			return err
		}
		rest = rest[n:]
	}
	if _, err := unix.FcntlInt(uintptr(mfd), unix.F_ADD_SEALS, memoSeals|unix.F_SEAL_SEAL); err != nil {
		return err
	}
	return unix.Sendmsg(fd, []byte{memoMark}, unix.UnixRights(mfd), nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
}

// memoSeals are the seals a remember's memfd must carry: no write, no
// change of size. Only a memfd made to be sealed can carry them, and
// reading one never blocks.
const memoSeals = unix.F_SEAL_WRITE | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW

// readMemo reads the content of a remember's memfd, fd: nil, false when
// fd is not a sealed memfd of at most memo.ItemMax bytes, which no
// sender in this tree sends. It never blocks, so the channel's reader
// can take a remember before the next message.
func readMemo(fd int) ([]byte, bool) {
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || seals&memoSeals != memoSeals {
		return nil, false
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size < 0 || st.Size > memo.ItemMax {
		return nil, false
	}
	content := make([]byte, st.Size)
	for off := 0; off < len(content); {
		n, err := unix.Pread(fd, content[off:], int64(off))
		if err != nil || n == 0 {
			return nil, false
		}
		off += n
	}
	return content, true
}
