package cli

import (
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// TestAuditVerifyOptions: audit verify takes one file and an optional
// head; anything else is a usage error before anything is read.
func TestAuditVerifyOptions(t *testing.T) {
	got, err := parseOptions(t, NewCmdAudit, "audit", "verify", "/var/log/a.jsonl", "--head", "abc")
	if err != nil || got.File != "/var/log/a.jsonl" || got.Head != "abc" {
		t.Fatalf("%+v, %v", got, err)
	}
	for _, args := range [][]string{{"audit", "verify"}, {"audit", "verify", "a", "b"}, {"audit", "verify", "a", "--bogus"}} {
		if _, err := parseOptions(t, NewCmdAudit, args...); fserr.CodeOf(err) != fserr.InvalidArgument {
			t.Errorf("%q: want FS_INVALID_ARGUMENT, got %v", args, err)
		}
	}
}
