package request

import (
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/memo"
)

// Memory is what a session remembers of the contents its reads returned,
// by SHA-256 (docs/design.md §5, FS_STALE): a memo.Store in dsh-fs mcp's
// own process, the exec supervisor's over the session's channel for a
// CLI call inside a session. A write, edit or patch whose --if-match is
// stale recalls from it the content read, for the diff to the content
// now; fsops hashes what it recalls before trusting it, and nothing
// recalled is ever written.
type Memory interface {
	// Remember keeps content, a whole file as read, under its SHA-256.
	Remember(content []byte)
	// Recall gives back the content whose SHA-256 is sum, or nil.
	Recall(sum string) []byte
}

// Remember has x's reads keep each whole text file they read, up to
// memo.ItemMax bytes, in m, and x's writes, edits and patches recall from
// m for a stale --if-match. A nil m remembers nothing.
func (x *Exec) Remember(m Memory) { x.memory = m }

// keep is how much of a file a read keeps for x's memory: none without
// one.
func (x *Exec) keep() int64 {
	if x.memory == nil {
		return 0
	}
	return memo.ItemMax
}

// remembered keeps res's whole content in x's memory, when the read kept
// it.
func (x *Exec) remembered(res *fsops.ReadResult) {
	if x.memory != nil && res != nil && res.Kept != nil {
		x.memory.Remember(res.Kept)
		res.Kept = nil
	}
}

// recall is the fsops.Recall of a mutation: the content given back
// (Mutation.IfMatchContent, which fsops.CheckGiven has checked against
// IfMatch), else what x's memory holds; nil when neither is there.
func (x *Exec) recall(given []byte) fsops.Recall {
	switch {
	case given != nil:
		return func(string) []byte { return given }
	case x.memory != nil:
		return x.memory.Recall
	}
	return nil
}
