package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/config"
)

// TestCommandTreeOnlyTheOneRun: a call of a command of oneCommandTrees (a
// file command, exec, policy, version) runs in a tree of the root and that
// command alone, and prints, byte for byte, and exits as it does in the
// whole tree: its results, its usage errors and their
// suggestions, the shell's habits, and help (which takes the whole tree).
func TestCommandTreeOnlyTheOneRun(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // the session cwd
	env := map[string]string{"DSH_FS_CWD": dir, "DSH_FS_ENFORCE": "off", "DSH_FS_TMP": "false", "DSH_FS_CONFIG": "", "HOME": dir}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	run := func(whole bool, args []string) (string, int) {
		var out bytes.Buffer
		a := &App{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, LookupEnv: lookup,
			Locations: config.Locations{SystemDir: filepath.Join(dir, "no-system"), Home: func() (string, error) { return dir, nil }}, wholeTree: whole}
		status := a.Run(args)
		return out.String(), status
	}
	for _, args := range [][]string{
		{"stat", "a.txt"},
		{"stat"},
		{"stat", "a.txt", "b.txt", "c.txt"},
		{"stat", "--bogus", "a.txt"},
		{"stat", "-x", "a.txt"},
		{"stat", "--help"},
		{"stat", "-h"},
		{"read", "a.txt", "--limit", "1"},
		{"read", "a.txt", "--limit", "x"},
		{"read", "a.txt", "--ofset", "1"},
		{"grep", "-rn", "two", "."},
		{"grep", "-n", "two"},
		{"find", "*.txt", "."},
		{"find", "*.txt", "--limit", "0"},
		{"ls", "."},
		{"ls", "--recurse", "."},
		{"edit", "a.txt", "--old", "one"},
		{"edit", "a.txt", "--old-text", "one", "--new", "1"},
		{"write", "b.txt", "--dry-run"},
		{"patch", "--from", "nothing.patch"},
		{"stat", "a.txt", "--output", "text"},
		{"stat", "--mode", "bogus", "a.txt"},
		{"stat", "--", "-h"},
		{"version"},
		{"version", "x"},
		{"version", "--output", "text"},
		{"policy"},
		{"policy", "--bogus"},
		{"policy", "--mode", "read-only", "x"},
		{"exec"},
		{"exec", "--bogus", "--", "true"},
		{"exec", "--cnfig", "x", "--", "true"},
		{"exec", "--escalate", "read-only", "--", "true"},
		{"exec", "--mode", "bogus", "--", "true"},
		// Printed without a tree (versionOnly), as the whole tree's
		// cobra prints them.
		{"--version"},
		{"-v"},
		{"--version", "--output", "text"},
		// The completion of flags' words, registered only for these.
		{"__complete", "stat", "a.txt", "--mode", ""},
		{"__completeNoDesc", "find", "*.txt", "--type", ""},
		{"__complete", "--output", ""},
		// The whole tree, with no completion of words registered.
		{"--mode", "read-only", "stat", "a.txt"},
		{"help", "stat"},
		{"tools", "--bogus"},
	} {
		lazy, lazyStatus := run(false, args)
		whole, wholeStatus := run(true, args)
		if lazy != whole || lazyStatus != wholeStatus {
			t.Errorf("%q: the tree of one command gives status %d:\n%s\nthe whole tree %d:\n%s", args, lazyStatus, lazy, wholeStatus, whole)
		}
		if lazy == "" {
			t.Errorf("%q: printed nothing", args)
		}
		if testing.Verbose() {
			t.Logf("%q: %d %.120s", args, lazyStatus, lazy)
		}
	}
}

// TestAppRunsCallsApart: one App runs one call after another, and each
// prints what it prints on an App of its own: nothing of the first call
// (its path, its resolved target, its mode, its output form) leaks into
// the result header of the next, a failure before its run began included.
func TestAppRunsCallsApart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir) // the session cwd
	env := map[string]string{"DSH_FS_CWD": dir, "DSH_FS_ENFORCE": "off", "DSH_FS_TMP": "false", "DSH_FS_CONFIG": "", "HOME": dir}
	var out bytes.Buffer
	newApp := func() *App {
		return &App{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out,
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			Locations: config.Locations{SystemDir: filepath.Join(dir, "no-system"), Home: func() (string, error) { return dir, nil }}}
	}
	run := func(a *App, args ...string) (string, int) {
		out.Reset()
		status := a.Run(args)
		return out.String(), status
	}
	for _, tc := range []struct {
		name          string
		first, second []string
	}{
		{"a usage error after a call", []string{"stat", "a.txt", "--mode", "read-only"}, []string{"ls", "--bogus"}},
		{"a failure after a call", []string{"read", "a.txt", "--mode", "read-only"}, []string{"read", "missing.txt"}},
		{"a call after a text call", []string{"stat", "a.txt", "--output", "text"}, []string{"version"}},
		{"a call after a failure", []string{"write", "../x.txt", "--content", "x"}, []string{"policy", "--mode", "read-only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared := newApp()
			first, _ := run(shared, tc.first...)
			alone, aloneStatus := run(newApp(), tc.second...)
			second, status := run(shared, tc.second...)
			if second != alone || status != aloneStatus {
				t.Errorf("after %q, %q gives status %d:\n%s\non an App of its own %d:\n%s", tc.first, tc.second, status, second, aloneStatus, alone)
			}
			if first == alone {
				t.Fatalf("control: %q and %q print the same: %s", tc.first, tc.second, first)
			}
		})
	}
}

// TestCommandTreeChoice: only a command of oneCommandTrees named first,
// with no help on its line, gets the small tree.
func TestCommandTreeChoice(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		small bool
	}{
		{[]string{"stat", "x"}, true},
		{[]string{"grep", "-n", "x"}, true},
		{[]string{"find", "*.go", "--", "-h"}, true},
		{nil, false},
		{[]string{"policy"}, true},
		{[]string{"exec", "--", "ls"}, true},
		{[]string{"exec", "ls", "-h"}, false},
		{[]string{"version"}, true},
		{[]string{"tools"}, false},
		{[]string{"mcp", "--help"}, false},
		{[]string{"--mode", "read-only", "stat", "x"}, false},
		{[]string{"stat", "--help"}, false},
		{[]string{"stat", "-h"}, false},
		{[]string{"grep", "-nh", "x"}, false},
		{[]string{"read", "help"}, false},
		{[]string{"completion", "bash"}, false},
		{[]string{"help", "stat"}, false},
		{[]string{"__complete", "stat", "--mode", ""}, false},
	} {
		root := newCmdTree(&invocation{}, tc.args)
		if small := len(root.Commands()) == 1; small != tc.small {
			t.Errorf("%q: %d commands, want the small tree %v", tc.args, len(root.Commands()), tc.small)
		}
	}
}

// TestCommandTreeCompletesWordsOnlyWhenAsked: the completion of flags'
// words is registered in the tree of a shell's completion request, and
// in no other (TestCommandTreeOnlyTheOneRun shows the answers are
// those of the whole tree).
func TestCommandTreeCompletesWordsOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		complete bool
	}{
		{[]string{"__complete", "stat", "--mode", ""}, true},
		{[]string{"__completeNoDesc", "stat", "--mode", ""}, true},
		{[]string{"--mode", "read-only", "stat", "x"}, false},
		{[]string{"completion", "bash"}, false},
		{[]string{"stat", "--help"}, false},
		{nil, false},
	} {
		root := newCmdTree(&invocation{}, tc.args)
		_, registered := root.GetFlagCompletionFunc(config.FlagMode)
		if registered != tc.complete {
			t.Errorf("%q: --mode's words registered %v, want %v", tc.args, registered, tc.complete)
		}
	}
	if _, registered := NewCmdRoot(&App{}).GetFlagCompletionFunc(config.FlagMode); !registered {
		t.Error("NewCmdRoot: --mode's words not registered")
	}
}

// brokenWriter is a stdout whose reader is gone: every write fails.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// TestVersionOnlyToBrokenStdout: --version printed with no tree
// (versionOnly) to a stdout that cannot be written is the operation
// failing (exit 1), said on stderr, not a success.
func TestVersionOnlyToBrokenStdout(t *testing.T) {
	for _, arg := range []string{"--version", "-v"} {
		var errs bytes.Buffer
		a := &App{Stdin: strings.NewReader(""), Stdout: brokenWriter{}, Stderr: &errs,
			LookupEnv: func(string) (string, bool) { return "", false }}
		if status := a.Run([]string{arg}); status != ExitFailed || !strings.Contains(errs.String(), "file already closed") {
			t.Errorf("%s: status %d, stderr %q; want %d and the write's error", arg, status, errs.String(), ExitFailed)
		}
	}
}
