package cli

import (
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// The hand-over to dsh-fs-mcp fails, and says why, rather than replace
// this process: from a dsh-fs-mcp built without its server (which would
// hand over to itself for ever), and where no dsh-fs-mcp is beside it.
func TestHandOverRefusals(t *testing.T) {
	for _, tc := range []struct {
		self string
		code fserr.Code
		hint bool
	}{
		{"/usr/local/bin/" + MCPBinary, fserr.IO, false},
		{t.TempDir() + "/dsh-fs", fserr.NotFound, true},
	} {
		err := handOver(&invocation{args: []string{"mcp"}}, tc.self)
		fe, ok := err.(*fserr.Error)
		if !ok || fe.Code() != tc.code || (fe.Hint != "") != tc.hint {
			t.Errorf("from %s: %#v, want %s (hint %v)", tc.self, err, tc.code, tc.hint)
		}
	}
}
