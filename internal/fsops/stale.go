package fsops

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
)

// Recall gives back the content its caller read whose SHA-256 (hex,
// lower case) is sum, or nil when it does not know it: what a session
// remembers of its reads, or what the caller handed back. A stale
// --if-match diffs it against the file as it is now. fsops hashes what
// Recall returns before trusting it, so a wrong answer shows no diff,
// and whatever it returns never reaches the disk.
type Recall func(sum string) []byte

// staleBasis is what a mutation refused as stale can show of the
// change: the content there now, when the mutation held it (nil, or
// over the basis limit when it did not), and the caller's Recall.
type staleBasis struct {
	now    []byte
	held   bool
	recall Recall
	diff   diff.Options
}

// checkIfMatch refuses with FS_STALE when the caller's expected hash is not
// the current content's. When the caller's Recall knows the content it
// read, the detail carries the diff from it to the content now: the file
// the call was refused on, which the fence has already let it read
// (deny_read is decided on what was opened before any content is read).
func checkIfMatch(op, given, want, current string, b staleBasis) error {
	if want == "" || strings.EqualFold(want, current) {
		return nil
	}
	e := fserr.New(fserr.Stale, op+": "+given+": changed since it was read (sha256 "+shortSum(current)+", expected "+shortSum(want)+")")
	// Both in full: a caller sure of its change retries with the current
	// hash without a read to learn it, as FS_EXISTS allows.
	d := StaleDetail{SHA256: current, Expected: strings.ToLower(want)}
	e.Hint = "redo the change against the current content, whose sha256 is detail.sha256 (pass it as --if-match once you know what changed); nothing was changed"
	if current != "" {
		d.Diff = b.since(given, d.Expected)
	}
	if d.Diff != nil {
		e.Hint = "detail.diff shows what changed since you read it; redo the change against the current content, whose sha256 is detail.sha256 (pass it as --if-match); nothing was changed"
	}
	e.Detail = d
	return e
}

// since is the diff from the content whose hash is want, when b's
// Recall knows it, to the content now; nil when the content read is not
// known. The diff has the bounds of every diff (diff_basis_max_bytes,
// diff_max_bytes), and is given in full whatever --diff asked of the
// change's own.
func (b staleBasis) since(given, want string) *diff.Result {
	if b.recall == nil {
		return nil
	}
	old := b.recall(want)
	if old == nil {
		return nil
	}
	if sum := sha256.Sum256(old); hex.EncodeToString(sum[:]) != want {
		return nil
	}
	opt := b.diff
	opt.Form = diff.FormAuto
	var r diff.Result
	if !b.held {
		r = diff.Omitted(diff.ReasonBasisTooLarge)
	} else {
		r = diff.Unified(given, diffText(old), diffText(b.now), opt)
	}
	return &r
}

// StaleDetail is the detail of FS_STALE for an --if-match that is not
// the current content's hash: both hashes, in full. SHA256 is "" when the
// file does not exist. Diff, when the content read is known (a read the
// session remembers, or the content given back), goes from it to the
// content now.
type StaleDetail struct {
	SHA256   string       `json:"sha256"`
	Expected string       `json:"expected"`
	Diff     *diff.Result `json:"diff,omitempty"`
}

// CheckGiven checks content a caller gives back as what it read against
// its --if-match: it must hash to it, or it is FS_INVALID_ARGUMENT.
func CheckGiven(op, ifMatch string, content []byte) error {
	if content == nil {
		return nil
	}
	if ifMatch == "" {
		return fserr.New(fserr.InvalidArgument, op+": --if-match-content needs --if-match, the sha256 of the content given back")
	}
	sum := sha256.Sum256(content)
	if got := hex.EncodeToString(sum[:]); !strings.EqualFold(got, ifMatch) {
		e := fserr.New(fserr.InvalidArgument, op+": --if-match-content does not hash to --if-match (its sha256 is "+shortSum(got)+")")
		e.Hint = "give back the content exactly as read returned it, or leave --if-match-content out; nothing was changed"
		return e
	}
	return nil
}
