package wire

import (
	"errors"
	"regexp"
	"sync"
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

// memoMark opens a remember on the channel; any other byte, a request
// with its reply socket (Forward).
const memoMark = 'm'

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
