package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/denials"
	"github.com/dshfs/dsh-fs/internal/policyview"
)

// TestDenialsOptions: every argument is a path to explain, none at all
// lists the log alone.
func TestDenialsOptions(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"denials"}, nil},
		{[]string{"denials", ".git/config", "/etc/hosts"}, []string{".git/config", "/etc/hosts"}},
		{[]string{"--output", "text", "denials", "a"}, []string{"a"}},
	} {
		opts, err := parseOptions(t, NewCmdDenials, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(opts.Paths, "|") != strings.Join(c.want, "|") {
			t.Errorf("%q: paths %q, want %q", c.args, opts.Paths, c.want)
		}
	}
}

// TestDenialsText: one line per entry, with its count, and one per path
// explained; outside a session, it says there is no log.
func TestDenialsText(t *testing.T) {
	var b bytes.Buffer
	r := &DenialsResult{Session: true, Dropped: 3, Entries: []denials.Entry{denials.Proxy("denied.test", 80, "not in network_allow", "network_allow")},
		Explained: []policyview.Explained{{Path: "x", Resolved: "/w/x", Op: "write", Layer: "mount (read-only tree)", Rule: "outside the writable roots", Escalation: "no"}}}
	r.Entries[0].Count = 2
	r.WriteText(&b)
	want := "connect denied.test:80 ×2: proxy: not in network_allow; escalation: no: the answer for a host holds for the session; a person adds the host to network_allow in a trusted config\n" +
		"3 more denials not logged (the log is full)\n" +
		"write /w/x: mount (read-only tree): outside the writable roots; escalation: no\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	(&DenialsResult{}).WriteText(&b)
	if b.String() != "no dsh-fs exec session: no log of denials\n" {
		t.Errorf("outside a session: %q", b.String())
	}
}
