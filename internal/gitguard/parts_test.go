package gitguard

import "testing"

// TestRunsCode: the keys that make git run a command are told from the
// ones that do not, by section, subsection and name, in any case.
func TestRunsCode(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"[core]\n\tfsmonitor = x\n", true},
		{"[Core]\n\tHooksPath = x\n", true},
		{"[core]\n\tsshCommand = x\n", true},
		{"[core]\n\tpager = x\n", true},
		{"[core]\n\teditor = x\n", true},
		{"[core]\n\taskPass = x\n", true},
		{"[core]\n\tbare = false\n", false},
		{"[core]\n\tattributesFile = x\n", false},
		{"[filter \"lfs\"]\n\tsmudge = x\n", true},
		{"[filter \"lfs\"]\n\trequired = true\n", true},
		{"[diff \"pdf\"]\n\ttextconv = x\n", true},
		{"[diff \"pdf\"]\n\tbinary = true\n", false},
		{"[diff]\n\texternal = x\n", true},
		{"[merge \"ours\"]\n\tdriver = x\n", true},
		{"[alias]\n\tst = !sh -c x\n", true},
		{"[alias]\n\tst = status\n", false},
		{"[include]\n\tpath = x\n", true},
		{"[includeIf \"gitdir:/w/\"]\n\tpath = x\n", true},
		{"[credential \"https://x\"]\n\thelper = x\n", true},
		{"[gpg \"ssh\"]\n\tprogram = x\n", true},
		{"[gpg \"ssh\"]\n\tdefaultKeyCommand = x\n", true},
		{"[remote \"origin\"]\n\turl = x\n", false},
		{"[remote \"origin\"]\n\tuploadpack = x\n", true},
		{"[protocol \"ext\"]\n\tallow = always\n", true},
		{"[pager]\n\tlog = x\n", true},
		{"[sequence]\n\teditor = x\n", true},
		{"[submodule \"s\"]\n\tupdate = !x\n", true},
		{"[submodule \"s\"]\n\tupdate = rebase\n", false},
		{"[user]\n\tname = x\n", false},
		{"[imap]\n\ttunnel = x\n", true},
		{"[init]\n\ttemplateDir = x\n", true},
		{"[lfs \"customtransfer.t\"]\n\tpath = x\n", true},
		{"[lfs \"extension.e\"]\n\tsmudge = x\n", true},
		{"[lfs]\n\turl = x\n", false},
		{"[branch \"main\"]\n\tremote = origin\n", false},
	} {
		entries, err := ParseConfig([]byte(tc.text))
		if err != nil || len(entries) != 1 {
			t.Fatalf("%q: %v %v", tc.text, entries, err)
		}
		if got := RunsCode(entries[0]); got != tc.want {
			t.Errorf("RunsCode(%s) = %v, want %v", entries[0].Key(), got, tc.want)
		}
	}
}
