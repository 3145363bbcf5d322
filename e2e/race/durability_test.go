//go:build unix

package race

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// syncCall is one line of strace's output that syncs or names a file.
var syncCall = regexp.MustCompile(`\b(fsync|fdatasync|syncfs|rename|renameat|renameat2|link|linkat)\(`)

// TestReplaceSyncsTheFileNotTheFolder pins the durability rule of write,
// edit and patch (design §6): each new content is fsynced in its temp
// file before any rename or link gives it the target's name (old content
// or new, never a torn file, across a power loss), and the folder is not
// synced after the rename (the result is atomic, durable at the next
// journal commit): one fsync a file, all before the first rename.
func TestReplaceSyncsTheFileNotTheFolder(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace is not installed: the syscalls of a write cannot be traced here")
	}
	bin := harness.Bin(t)
	ws := t.TempDir()
	harness.WriteTree(t, ws, map[string]string{"a.txt": "one\ntwo\n", "b.txt": "three\n"})
	patch := "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** Update File: b.txt\n@@\n-three\n+THREE\n*** Add File: c.txt\n+new\n*** End Patch\n"
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		files int
	}{
		{"write creating", []string{"write", "new.txt", "--content", "hello"}, "", 1},
		{"write replacing", []string{"write", "a.txt", "--content", "one\ntwo\n", "--overwrite"}, "", 1},
		{"edit", []string{"edit", "a.txt", "--old", "one", "--new", "ONE"}, "", 1},
		{"patch of three files", []string{"patch", "--from", "-"}, patch, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "trace")
			args := append([]string{"-f", "-qq", "-e", "signal=none", "-e", "trace=%file,fsync,fdatasync,syncfs", "-o", trace, bin}, tc.args...)
			c := harness.Cmd(strace, harness.Env(t, ws), ws, args...)
			code, res, out, errs := harness.Run(t, c, strings.NewReader(tc.stdin))
			if code != 0 || !res.OK {
				t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", tc.args, code, out, errs)
			}
			raw, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			syncs, firstName, lastName := 0, -1, -1
			var calls []string
			for i, line := range strings.Split(string(raw), "\n") {
				m := syncCall.FindStringSubmatch(line)
				if m == nil || strings.Contains(line, "resumed>") {
					continue
				}
				calls = append(calls, strings.TrimSpace(line))
				switch m[1] {
				case "fsync", "fdatasync", "syncfs":
					syncs++
					if firstName >= 0 {
						t.Errorf("a sync after the first rename or link (line %d): %s", i+1, line)
					}
				default:
					if firstName < 0 {
						firstName = i
					}
					lastName = i
				}
			}
			if syncs != tc.files || lastName < 0 {
				t.Errorf("%d syncs for %d files (want one a file, each before the renames):\n%s", syncs, tc.files, strings.Join(calls, "\n"))
			}
		})
	}
}
