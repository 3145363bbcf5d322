package cli

import "testing"

// TestPolicyFormatOptions: --format sbpl reaches the options; another
// format is a usage error before anything runs.
func TestPolicyFormatOptions(t *testing.T) {
	opts, err := parseOptions(t, NewCmdPolicy, "policy", "--format", "sbpl")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Format != FormatSBPL {
		t.Errorf("format %q, want %q", opts.Format, FormatSBPL)
	}
	opts, err = parseOptions(t, NewCmdPolicy, "policy", "--format", "xml")
	wantUsage(t, opts, err, `--format xml: the only format is sbpl`)
}
