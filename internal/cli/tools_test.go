package cli

import "testing"

// TestToolsFailSafe: a command nobody classified is assumed writing,
// destructive and not concurrency-safe.
func TestToolsFailSafe(t *testing.T) {
	if got := safetyOf("some-new-command"); got != (safety{ReadOnly: false, Destructive: true, ConcurrencySafe: false}) {
		t.Errorf("unknown command: %+v, want fail-safe", got)
	}
	if got := safetyOf("read"); !got.ReadOnly || got.Destructive || !got.ConcurrencySafe {
		t.Errorf("read: %+v", got)
	}
	for _, name := range []string{"write", "edit"} {
		if got := safetyOf(name); got.ReadOnly || !got.Destructive || got.ConcurrencySafe {
			t.Errorf("%s: %+v", name, got)
		}
	}
}

// TestToolsCoverEveryCommand: every operation of the command tree is
// offered as a tool with both schemas, and nothing else is.
func TestToolsCoverEveryCommand(t *testing.T) {
	res, err := buildTools()
	if err != nil {
		t.Fatal(err)
	}
	offered := map[string]bool{}
	for _, tl := range res.Tools {
		offered[tl.Name] = true
		if tl.Description == "" || len(tl.InputSchema) == 0 || len(tl.ResultSchema) == 0 {
			t.Errorf("%s: incomplete tool %+v", tl.Name, tl)
		}
	}
	root := NewCmdRoot(&App{})
	for _, c := range root.Commands() {
		if c.IsAdditionalHelpTopicCommand() {
			continue // a help topic (policy-flags), no call
		}
		switch c.Name() {
		case "version", "tools", "help", "completion":
			continue // about dsh-fs itself, not the files
		case "mcp", "exec":
			continue // a server or a session a harness starts, not a call a model makes
		case "audit":
			continue // a person's check of the sessions' audit log, not a call on the files
		}
		if !offered[c.Name()] {
			t.Errorf("command %s is not offered as a tool", c.Name())
		}
	}
}
