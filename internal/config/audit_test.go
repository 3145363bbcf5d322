package config

import (
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestAuditLogSetting: audit_log is none by default; a trusted file or
// the managed requirements name it, absolute or ~/…; a session source
// can neither set, move nor clear it.
func TestAuditLogSetting(t *testing.T) {
	want := func(path string) func(t *testing.T, s *Settings) {
		return func(t *testing.T, s *Settings) {
			t.Helper()
			if s.AuditLog != path {
				t.Errorf("audit_log %q, want %q", s.AuditLog, path)
			}
		}
	}
	for _, tc := range []loadCase{
		{name: "default none", check: want("")},
		{name: "system", system: "audit_log: /var/log/dsh-fs/audit.jsonl\n", check: want("/var/log/dsh-fs/audit.jsonl")},
		{name: "managed replaces the user's", user: "audit_log: /a/audit.jsonl\n", requirements: "audit_log: /b/audit.jsonl\n", check: want("/b/audit.jsonl")},
		{name: "relative in a trusted file", system: "audit_log: audit.jsonl\n", code: fserr.ConfigInvalid},
		{name: "session sets it", session: "audit_log: /tmp/mine.jsonl\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: audit_log"},
		{name: "session clears it", system: "audit_log: /a/audit.jsonl\n", session: "audit_log: \"\"\n", reason: policy.ReasonSessionWiden},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLoad(t, tc) })
	}
}
