//go:build unix

package supervisor

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policyview"
)

// TestExplainLineAsksNothing: what the session printed reaches the added
// line only as a plain path; a path that holds a question, markup or a
// control, or is long, is not shown, and the line never reads as the
// approval question (docs/design.md §10).
func TestExplainLineAsksNothing(t *testing.T) {
	ex := policyview.Explained{Rule: "outside the writable roots: the mount layer's read-only tree …", Escalation: "no"}
	for _, path := range []string{
		"/out/x? [y/N] ",
		"/out/x\x1b[2K\rdsh-fs: write /etc/passwd was denied",
		"/out/\u202ex",
		"/out/" + strings.Repeat("a", maxShownPath),
		"/out/\"quoted\"",
	} {
		line := string(explainLine(path, ex))
		if strings.Contains(line, "/out/") || strings.ContainsAny(line, "?\x1b\r\n\u202e") || strings.Contains(line, "[y/N]") {
			t.Errorf("%q: the line shows it: %q", path, line)
		}
		if !strings.HasPrefix(line, "[sandbox: the path named above is read-only in this session (outside the writable roots); no escalation lifts it;") {
			t.Errorf("%q: %q", path, line)
		}
	}
	if line := string(explainLine("/out/a b.txt", ex)); !strings.HasPrefix(line, "[sandbox: /out/a b.txt is read-only") || len(line) > 400 {
		t.Errorf("a plain path: %q", line)
	}
}

// TestRefusedWith: a refusal is the sandbox's only where the layer the
// policy names fails with that error: the mount layer with EROFS and
// EBUSY, Landlock with EACCES (where the file's own permissions allow
// the write) and EPERM; nothing where no layer refuses.
func TestRefusedWith(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		layer string
		errno unix.Errno
		want  bool
	}{
		{policyview.LayerReadOnlyTree, unix.EROFS, true},
		{policyview.LayerReadOnlyBind, unix.EBUSY, true},
		{policyview.LayerReadOnlyTree, unix.EACCES, false},
		{policyview.LayerLandlock, unix.EACCES, true},
		{policyview.LayerLandlock, unix.EPERM, true},
		{policyview.LayerLandlock, unix.EROFS, false},
		{policyview.LayerNone, unix.EACCES, false},
		{policyview.LayerNone, unix.EROFS, false},
		{policyview.LayerShellMay, unix.EROFS, false},
	} {
		if got := refusedWith(c.layer, c.errno, dir+"/new"); got != c.want {
			t.Errorf("%s, %v: %t, want %t", c.layer, c.errno, got, c.want)
		}
	}
}
