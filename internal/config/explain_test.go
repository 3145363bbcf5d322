package config

import (
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// TestExplainDenialsSetting: explain_denials is inline by default; any
// source may set it, a session's too (it widens nothing), to inline, log
// or off, and nothing else.
func TestExplainDenialsSetting(t *testing.T) {
	want := func(v string) func(t *testing.T, s *Settings) {
		return func(t *testing.T, s *Settings) {
			t.Helper()
			if s.ExplainDenials != v {
				t.Errorf("explain_denials %q, want %q", s.ExplainDenials, v)
			}
		}
	}
	for _, tc := range []loadCase{
		{name: "default", check: want(ExplainInline)},
		{name: "system", system: "explain_denials: log\n", check: want(ExplainLog)},
		{name: "session turns it off", session: "explain_denials: off\n", check: want(ExplainOff)},
		{name: "session turns it back on", system: "explain_denials: off\n", session: "explain_denials: inline\n", check: want(ExplainInline)},
		{name: "unknown", system: "explain_denials: loud\n", code: fserr.ConfigInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLoad(t, tc) })
	}
}
