package result

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestDenyReadHintTellsTheTruth: the hint of a deny_read denial says the
// shell finds the path empty only where it existed when the session
// started, and that a file created during the session is not hidden from
// the shell. Before, it said the shell "finds it empty" of every such
// path, and a file created during the session the shell read in full.
func TestDenyReadHintTellsTheTruth(t *testing.T) {
	f := NewFailure(Header{Op: "read"}, &policy.DeniedError{Op: "read", Path: "x/.env", Mode: policy.WorkspaceWrite,
		Reason: policy.ReasonDenyRead, Matched: "**/.env"})
	hint := f.Error.Hint
	for _, want := range []string{"no escalation lifts deny_read (**/.env)", "existed when the session started", "created during the session", "remove that entry from deny_read"} {
		if !strings.Contains(hint, want) {
			t.Errorf("the hint %q does not say %q", hint, want)
		}
	}
}
