//go:build unix

package race

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestBareRepoCompletionRace: the parts of a git directory (HEAD with
// objects/ and refs/, or HEAD with commondir) written at the top of a
// writable root by parallel processes, each write allowed on its own,
// must never complete one: git run there later, outside any sandbox,
// would honour a config planted beside them. Each trial starts the
// writers of one set of parts together in a fresh workspace and counts
// a trial whose workspace ends up a git directory.
func TestBareRepoCompletionRace(t *testing.T) {
	trials, most := 200, 25*time.Second
	if testing.Short() {
		trials = 50
	}
	bin := harness.Bin(t)
	sets := [][][]string{
		{
			{"write", "HEAD", "--content", "ref: refs/heads/main\n"},
			{"write", "objects/x", "--mkdir", "--content", "x"},
			{"write", "refs/x", "--mkdir", "--content", "x"},
		},
		{
			{"write", "HEAD", "--content", "ref: refs/heads/main\n"},
			{"write", "commondir", "--content", "../..\n"},
		},
	}
	base := t.TempDir()
	env := harness.Env(t, base)
	completed, denied, ran := map[int]int{}, 0, 0
	deadline := time.Now().Add(most)
	for i := 0; i < trials && time.Now().Before(deadline); i++ {
		set := i % len(sets)
		ws := filepath.Join(base, fmt.Sprintf("ws%d", i))
		if err := os.Mkdir(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		wsEnv := append(append([]string{}, env...), "DSH_FS_CWD="+ws)
		var cmds []*exec.Cmd
		for _, args := range sets[set] {
			c := harness.Cmd(bin, wsEnv, ws, args...)
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			cmds = append(cmds, c)
		}
		for _, c := range cmds {
			if err := c.Wait(); err != nil {
				if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
					denied++
					continue
				}
				t.Errorf("%v: %v", c.Args, err)
			}
		}
		ran++
		if isGitDirOnDisk(ws) {
			completed[set]++
		}
		os.RemoveAll(ws)
	}
	t.Logf("%d trials, %d writes denied; completed repositories: %d of HEAD+objects+refs, %d of HEAD+commondir",
		ran, denied, completed[0], completed[1])
	if n := completed[0] + completed[1]; n > 0 {
		t.Errorf("%d of %d trials completed a repository at the top of the workspace", n, ran)
	}
	if denied == 0 {
		t.Errorf("no write was denied: the rule was never met")
	}
}

// isGitDirOnDisk is git's test of a git directory, as the sandbox makes it.
func isGitDirOnDisk(dir string) bool {
	has := func(name string) bool {
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	return has("HEAD") && (has("objects") && has("refs") || has("commondir"))
}
