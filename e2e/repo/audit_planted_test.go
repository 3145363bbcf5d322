package repo

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// plantedCall is one call planted in a copy of a real source file, and
// the kind of finding the audit must make of it ("" when it must make
// none: the file's registry allows it).
type plantedCall struct {
	name    string
	path    string // where the copy goes, and which real file it copies
	imports []string
	body    string
	want    string
}

var plantedCalls = []plantedCall{
	{"path mutation", "internal/text/text.go", []string{`"os"`}, `os.Remove("x")`, kindMutate},
	{"os.OpenFile for writing", "internal/text/text.go", []string{`"os"`}, `os.OpenFile("x", os.O_WRONLY|os.O_CREATE, 0o644)`, kindMutate},
	{"syscall mutation", "internal/text/text.go", []string{`"syscall"`}, `syscall.Unlink("x")`, kindMutate},
	{"syscall chmod", "internal/text/text.go", []string{`"syscall"`}, `syscall.Chmod("x", 0o777)`, kindMutate},
	{"syscall open for writing", "internal/text/text.go", []string{`"syscall"`}, `syscall.Open("x", syscall.O_RDWR, 0)`, kindMutate},
	{"open for writing where only reads may", "internal/kernel/procfs_linux.go", []string{`"golang.org/x/sys/unix"`},
		`unix.Openat(3, "x", unix.O_WRONLY|unix.O_CREAT, 0o644)`, kindMutate},
	{"mutation as a function value", "internal/text/text.go", []string{`"golang.org/x/sys/unix"`}, `f := unix.Unlinkat; _ = f`, kindMutate},
	{"mutation through the fence's OS layer", "internal/text/text.go", []string{`"github.com/dshfs/dsh-fs/internal/fsys"`}, `fsys.Unlinkat(3, "x", 0)`, kindMutate},
	{"an NtCreateFile outside the OS layer", "internal/text/text.go", []string{`"golang.org/x/sys/windows"`}, `windows.NtCreateFile(nil, 0, nil, nil, nil, 0, 0, 0, 0, 0, 0)`, kindMutate},
	{"a raw syscall of Windows", "internal/text/text.go", []string{`"golang.org/x/sys/windows"`}, `windows.SyscallN(0)`, kindRaw},
	{"open for writing through the fence's OS layer", "internal/text/text.go", []string{`"github.com/dshfs/dsh-fs/internal/fsys"`},
		`fsys.Openat(3, "x", fsys.O_WRONLY|fsys.O_CREAT, 0o644)`, kindMutate},
	{"raw syscall", "internal/text/text.go", []string{`"syscall"`}, `syscall.Syscall6(syscall.SYS_UNLINKAT, 0, 0, 0, 0, 0, 0)`, kindRaw},
	{"raw syscall of any number", "internal/text/text.go", []string{`"golang.org/x/sys/unix"`}, `unix.RawSyscallNoError(1, 2, 3, 4)`, kindRaw},
	{"raw syscall through rawinit's ops", "internal/text/text.go", []string{`"github.com/dshfs/dsh-fs/internal/session/rawinit"`},
		`rawinit.Call(165)`, kindRaw},
	{"raw syscall as a rawinit op literal", "internal/text/text.go", []string{`"github.com/dshfs/dsh-fs/internal/session/rawinit"`},
		`rawinit.Op{Nr: 165}`, kindRaw},
	{"mount", "internal/text/text.go", []string{`"syscall"`}, `syscall.Mount("a", "b", "tmpfs", 0, "")`, kindMount},
	{"mount by a name the old list lacked", "internal/text/text.go", []string{`"golang.org/x/sys/unix"`}, `unix.MountSomethingNew(0)`, kindMount},
	{"fsmount", "internal/text/text.go", []string{`"golang.org/x/sys/unix"`}, `unix.Fsmount(3, 0, 0)`, kindMount},
	{"mount through a renamed import", "internal/text/text.go", []string{`xunix "golang.org/x/sys/unix"`},
		`xunix.MoveMount(3, "", 4, "", 0)`, kindMount},
	{"mount in a file registered for another kind", "internal/session/toolchains/ask.go", []string{`"golang.org/x/sys/unix"`},
		`unix.Unmount("x", 0)`, kindMount},
	{"exec.Command", "internal/text/text.go", []string{`"os/exec"`}, `exec.Command("sh")`, kindStart},
	{"exec.CommandContext", "internal/text/text.go", []string{`"context"`, `"os/exec"`}, `exec.CommandContext(context.Background(), "sh")`, kindStart},
	{"exec.Cmd literal", "internal/text/text.go", []string{`"os/exec"`}, `_ = &exec.Cmd{Path: "/bin/sh"}`, kindStart},
	{"os.StartProcess", "internal/text/text.go", []string{`"os"`}, `os.StartProcess("/bin/sh", nil, nil)`, kindStart},
	{"syscall.ForkExec", "internal/text/text.go", []string{`"syscall"`}, `syscall.ForkExec("/bin/sh", nil, nil)`, kindStart},
	{"syscall.Exec", "internal/text/text.go", []string{`"syscall"`}, `syscall.Exec("/bin/sh", nil, nil)`, kindStart},
	{"start in a file registered for mounts", "internal/session/child/rotree_linux.go", []string{`"os/exec"`}, `exec.Command("sh")`, kindStart},
	{"linkname", "internal/text/text.go", []string{`_ "unsafe"`}, "//go:linkname nanotime runtime.nanotime", kindLinkname},
	{"dot import", "internal/text/text.go", []string{`. "golang.org/x/sys/unix"`}, `Unlink("x")`, kindHidden},
	// Controls: the registry allows these, so the catches above are not
	// the audit failing on any planted call.
	{"control: mount in the mount layer", "internal/session/child/rotree_linux.go", []string{`"golang.org/x/sys/unix"`}, `unix.Mount("a", "b", "tmpfs", 0, "")`, ""},
	{"control: start where the supervisor re-runs itself", "internal/session/supervisor/entry.go", []string{`"os/exec"`}, `exec.Command("sh")`, ""},
	{"control: read-only open where reads may", "internal/kernel/procfs_linux.go", []string{`"golang.org/x/sys/unix"`},
		`unix.Openat(3, "x", unix.O_RDONLY|unix.O_PATH, 0)`, ""},
	{"control: raw syscall of the seccomp filter", "internal/kernel/seccompasm_linux.go", []string{`"golang.org/x/sys/unix"`}, `unix.Syscall(1, 2, 3, 4)`, ""},
	{"control: linkname where the fork's hooks are", "internal/session/rawinit/child_linux.go", nil, "//go:linkname nanotime runtime.nanotime", ""},
	{"control: the file unchanged", "internal/text/text.go", nil, ``, ""},
}

// TestAuditCatchesPlanted plants each kind of call the audit knows in a
// temporary copy of a real source file, alone in a tree laid out as the
// repository, and runs the audit's checking function (auditSources) on
// that tree: each planted call must be found, of its kind, in its file;
// each control must not.
func TestAuditCatchesPlanted(t *testing.T) {
	for _, c := range plantedCalls {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			plant(t, root, c)
			findings, checked, err := auditSources(root)
			if err != nil {
				t.Fatal(err)
			}
			if checked != 1 {
				t.Fatalf("audited %d files, want the one planted", checked)
			}
			var got []auditFinding
			for _, f := range findings {
				if f.path == c.path && f.kind != kindUnneeded {
					got = append(got, f)
				}
			}
			switch {
			case c.want == "" && len(got) > 0:
				t.Errorf("%s: the registry allows it, but the audit found %v", c.body, got)
			case c.want != "" && (len(got) != 1 || got[0].kind != c.want):
				t.Errorf("%s in %s: want one %q finding, got %v", c.body, c.path, c.want, got)
			}
		})
	}
}

// TestAuditFindsUnneededEntries: a registry entry whose file is gone, or
// no longer makes its kind of call, or has no reason, is a finding.
func TestAuditFindsUnneededEntries(t *testing.T) {
	root := t.TempDir()
	// rotree_linux.go without its mount calls: registered in mayMount for nothing.
	plant(t, root, plantedCall{path: "internal/session/child/rotree_linux.go"})
	if err := os.WriteFile(filepath.Join(root, "internal/session/child/rotree_linux.go"), []byte("package child\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mayMount["internal/text/text.go"] = ""
	t.Cleanup(func() { delete(mayMount, "internal/text/text.go") })
	findings, _, err := auditSources(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"internal/session/child/rotree_linux.go": "makes no such call", // present, but no mount call
		"internal/pathmatch/paths.go":            "makes no such call", // absent from the tree
		"internal/text/text.go":                  "without a reason",
	}
	for path, phrase := range want {
		found := false
		for _, f := range findings {
			found = found || (f.kind == kindUnneeded && f.path == path && strings.Contains(f.msg, phrase))
		}
		if !found {
			t.Errorf("no %q finding for %s: %v", phrase, path, findings)
		}
	}
}

// plant writes, under root at c.path, the repository's file of that path
// with c.imports added after its package clause and c.body in a function
// of its own at the end. The audit only parses: the copy need not build.
func plant(t *testing.T, root string, c plantedCall) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(harness.RepoRoot, filepath.FromSlash(c.path)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), c.path, src, parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	end := int(f.Name.End()) - 1 // token.Pos is 1-based for a file set's first file
	var b strings.Builder
	b.Write(src[:end])
	if len(c.imports) > 0 {
		b.WriteString("\n\nimport (\n\t" + strings.Join(c.imports, "\n\t") + "\n)\n")
	}
	b.Write(src[end:])
	if c.body != "" {
		b.WriteString("\nfunc plantedByTheAuditTest() {\n\t" + c.body + "\n}\n")
	}
	dst := filepath.Join(root, filepath.FromSlash(c.path))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestAuditFindsAssemblySyscalls: the parser does not read assembly, so
// a system call instruction in a .s file outside mayRawSyscall is a
// finding of its own; one without, or one registered, is none.
func TestAuditFindsAssemblySyscalls(t *testing.T) {
	for _, c := range []struct {
		path, body string
		want       bool
	}{
		{"internal/text/raw_linux_amd64.s", "TEXT ·raw(SB),NOSPLIT,$0-8\n\tMOVQ\t$87, AX\n\tSYSCALL\n\tRET\n", true},
		{"internal/text/raw_linux_arm64.s", "TEXT ·raw(SB),NOSPLIT,$0-8\n\tMOVD\t$35, R8\n\tSVC\n\tRET\n", true},
		{"internal/text/add_amd64.s", "TEXT ·add(SB),NOSPLIT,$0-8\n\tADDQ\tAX, BX // no SYSCALL here\n\tRET\n", false},
		{"internal/session/rawinit/vfork_linux_amd64.s", "TEXT ·rawVfork(SB),NOSPLIT,$0-24\n\tSYSCALL\n\tRET\n", false},
	} {
		t.Run(c.path, func(t *testing.T) {
			root := t.TempDir()
			full := filepath.Join(root, filepath.FromSlash(c.path))
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(full, []byte("#include \"textflag.h\"\n\n"+c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			findings, _, err := auditSources(root)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, f := range findings {
				found = found || f.path == c.path && f.kind == kindRaw
			}
			if found != c.want {
				t.Errorf("a raw system call finding in %s: %v, want %v", c.path, found, c.want)
			}
		})
	}
}
