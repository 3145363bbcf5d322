package seatbelt

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// macRealpath resolves as macOS does: /tmp, /var and /etc are symlinks
// into /private; a path under missing is not there.
func macRealpath(missing ...string) Realpath {
	return func(p string) (string, error) {
		for _, m := range missing {
			if p == m || strings.HasPrefix(p, m+"/") {
				return "", &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
			}
		}
		for _, l := range []string{"/tmp", "/var", "/etc"} {
			if p == l || strings.HasPrefix(p, l+"/") {
				return "/private" + p, nil
			}
		}
		return p, nil
	}
}

// TestCommand: the command is sandbox-exec by its absolute path, the
// profile, the parameters, --, then CMD by its path; the writable root
// spelled through /tmp is passed resolved.
func TestCommand(t *testing.T) {
	p := &plan.Plan{Path: "/bin/sh", Argv: []string{"sh", "-c", "echo hi"}, RestrictWrites: true,
		Writable: []string{"/tmp/ws"}, Network: true}
	path, argv, err := Command(p, macRealpath())
	if err != nil {
		t.Fatal(err)
	}
	if path != "/usr/bin/sandbox-exec" {
		t.Errorf("path %q, want /usr/bin/sandbox-exec", path)
	}
	if len(argv) < 4 || argv[0] != "sandbox-exec" || argv[1] != "-p" || !strings.HasPrefix(argv[2], "(version 1)\n(deny default)\n") {
		t.Fatalf("argv %q", argv)
	}
	want := []string{"-DWRITABLE_ROOT_0=/private/tmp/ws", "--", "/bin/sh", "-c", "echo hi"}
	if got := argv[3:]; !slices.Equal(got, want) {
		t.Errorf("argv after the profile %q, want %q", got, want)
	}
	if !strings.Contains(argv[2], `(allow file-write* (subpath (param "WRITABLE_ROOT_0")))`) {
		t.Errorf("the profile does not grant the root by its parameter:\n%s", argv[2])
	}
	if strings.Contains(argv[2], "/tmp") {
		t.Errorf("the profile's text names a user path:\n%s", argv[2])
	}
}

// TestCommandRefuses: no command, a proxy without a port, a path that
// cannot be resolved, and one too long each fail, with no argv.
func TestCommandRefuses(t *testing.T) {
	long := "/w/" + strings.Repeat("a", MaxString)
	broken := func(string) (string, error) { return "", fs.ErrPermission }
	for _, tc := range []struct {
		name     string
		p        plan.Plan
		realpath Realpath
		want     string
	}{
		{"no command", plan.Plan{}, macRealpath(), "no command"},
		{"proxy without port", plan.Plan{Path: "/bin/sh", Argv: []string{"sh"}, Network: true, ProxyFD: 5}, macRealpath(), "port"},
		{"unresolvable", plan.Plan{Path: "/bin/sh", Argv: []string{"sh"}, RestrictWrites: true, Writable: []string{"/w"}}, broken, "permission"},
		{"too long", plan.Plan{Path: "/bin/sh", Argv: []string{"sh"}, RestrictWrites: true, Writable: []string{long}}, macRealpath(), "longer than"},
		// Lint runs on every profile Build makes: a resolver that leaves
		// /tmp as it is (Linux's) gives a rule that would match nothing
		// on a Mac, refused before anything runs.
		{"lexical /tmp", plan.Plan{Path: "/bin/sh", Argv: []string{"sh"}, RestrictWrites: true, Writable: []string{"/tmp/ws"}},
			func(p string) (string, error) { return p, nil }, "symlink"},
		{"too many paths", plan.Plan{Path: "/bin/sh", Argv: []string{"sh"}, RestrictWrites: true, Writable: []string{"/w"},
			Files: &plan.Files{HiddenFiles: manyFiles(3000)}}, macRealpath(), "over"},
		{"relative", plan.Plan{Path: "/bin/sh", Argv: []string{"sh"}, RestrictWrites: true, Writable: []string{"w"}}, macRealpath(), "absolute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, argv, err := Command(&tc.p, tc.realpath)
			if err == nil || !strings.Contains(err.Error(), tc.want) || path != "" || argv != nil {
				t.Errorf("Command = %q, %q, %v; want an error with %q", path, argv, err, tc.want)
			}
		})
	}
}

// TestMissingResolvedThroughAncestor: a protected path not made yet is
// spelled through its nearest existing ancestor's real path.
func TestMissingResolvedThroughAncestor(t *testing.T) {
	p := &plan.Plan{RestrictWrites: true, Writable: []string{"/tmp/ws"},
		Files: &plan.Files{ReadOnly: []string{"/tmp/ws/.git"}}}
	prof, err := Build(p, macRealpath("/tmp/ws/.git"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(prof.Params, Param{"READ_ONLY_0", "/private/tmp/ws/.git"}) {
		t.Errorf("params %q: want READ_ONLY_0=/private/tmp/ws/.git", prof.Params)
	}
}

// manyFiles are n files of a deep folder of /w, 100 bytes each.
func manyFiles(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("/w/%s/%05d", strings.Repeat("d", 90), i)
	}
	return out
}
