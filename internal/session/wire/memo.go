package wire

import (
	"errors"
	"regexp"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/memo"
)

// The session's memory of its reads (docs/design.md §5, FS_STALE): a
// call inside a session hands each whole text file it read to the
// supervisor (OpRemember, one way: Remember), and a write, edit or
// patch refused as stale asks for the content it read back by its hash
// (OpRecall, a request), for the diff to the content now. The supervisor keeps it in its own memory, bounded
// (internal/memo), outside the session's reach and never on disk; it
// files content under the hash it computes itself. These requests ask
// for no escalation and run nothing.
const (
	OpRemember = "remember"
	OpRecall   = "recall"
)

// Memo is the body of a remember (Content, the whole file as read) or
// of a recall (SHA256, the hash the caller read).
type Memo struct {
	SHA256  string `json:"sha256,omitempty"`
	Content []byte `json:"content,omitempty"`
}

// hexSHA256 is compiled at the first recall, not at every start.
var hexSHA256 = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{64}$`) })

// checkMemo says what is wrong with a recall: it carries its memo alone.
func (req Request) checkMemo() error {
	switch {
	case req.Memo == nil:
		return errors.New("a " + req.Op + " carries its memo")
	case req.Write != nil || req.Edit != nil || req.Patch != nil || req.Mkdir != nil || req.Move != nil || req.Remove != nil || req.Escalate != "":
		return errors.New("a " + req.Op + " carries its memo and nothing of a call")
	case req.Op == OpRecall && (!hexSHA256().MatchString(req.Memo.SHA256) || req.Memo.Content != nil):
		return errors.New("a recall carries a sha256 in hex only")
	}
	return nil
}

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

// memoMark opens a remember on the channel; any other byte, a request
// with its reply socket (Forward).
const memoMark = 'm'

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

// Recall asks the session's supervisor over the channel fd for the
// content whose SHA-256 is sum: nil when it does not remember it. The
// caller hashes it again before trusting it.
func Recall(fd int, sum string) ([]byte, error) {
	rep, err := Forward(fd, Request{Op: OpRecall, Memo: &Memo{SHA256: sum}})
	if err == nil && rep.Refused != "" {
		err = errors.New(rep.Refused)
	}
	return rep.Content, err
}
