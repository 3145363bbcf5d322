package cmd

import "testing"

// The supervisor runs only what a session may forward: write or edit,
// asking to escalate. Anything else a process holding the channel sends
// is refused, whatever it carries.
func TestCheckForwarded(t *testing.T) {
	for _, tc := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"write", "x", "--content", "y", "--escalate", "danger-full-access"}, true},
		{[]string{"edit", "--escalate=danger-full-access", "x", "--old", "a", "--new", "b"}, true},
		{[]string{"--mode", "read-only", "write", "x", "--escalate", "workspace-write"}, true},
		{[]string{"write", "x", "--content", "y"}, false},
		{[]string{"write", "--", "--escalate"}, false},
		{[]string{"read", "x", "--escalate", "danger-full-access"}, false},
		{[]string{"exec", "--escalate", "danger-full-access", "--", "sh"}, false},
		{[]string{"mcp", "--escalate", "danger-full-access"}, false},
		{[]string{"nosuch", "--escalate", "danger-full-access"}, false},
		{nil, false},
	} {
		if why := checkForwarded(tc.args); (why == "") != tc.ok {
			t.Errorf("checkForwarded(%q) = %q, want ok %v", tc.args, why, tc.ok)
		}
	}
}
