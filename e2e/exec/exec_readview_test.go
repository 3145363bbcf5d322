//go:build unix

package exec

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// Issue 37, "deny_read holds for the shell wherever the shell can
// read": an unanchored deny_read glob ("**/.env") was enforced for the
// shell only where the walk of the roots went; the shell read the .env
// files of the person's other projects and caches. With such a glob the
// session's shell sees the home folders through a read view: the
// workspace, the caches it uses and the trusted read_home entries, and
// nothing else of them.

// readViewScript reads the secrets, then does an ordinary day's work in
// the view: a git commit (git's identity from ~/.gitconfig, a read_home
// entry) and a go build with a dependency from the module cache.
const readViewScript = `for f in "$HOME/other/.env" "$HOME/.cache/tool/.env" .env; do cat "$f"; echo "read=$?"; done
git init -q . && git add go.mod main.go && git commit -q -m first && echo committed
go build -o app . && ./app`

// readViewLayout is a cache layout whose home, caches and workspace lie
// in a folder of /home, which the view covers, with a .env in another
// project, one under ~/.cache and one in the workspace.
func readViewLayout(t *testing.T, dir string) cacheLayout {
	t.Helper()
	l := newCacheLayout(t, dir)
	base, err := os.MkdirTemp("/home", "dsh-fs-view-")
	if err != nil {
		t.Skipf("cannot make a home folder in /home: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	warm, _ := warmGoCache()
	home := base
	l.home, l.gocache, l.gomod = home, filepath.Join(home, ".cache", "go-build"), filepath.Join(home, "go", "pkg", "mod")
	linkTree(t, warm, l.gocache)
	os.MkdirAll(l.gomod, 0o755)
	linkTree(t, l.ws, filepath.Join(home, "ws"))
	l.ws = filepath.Join(home, "ws")
	harness.WriteTree(t, home, map[string]string{
		"other/.env":       "SECRET_OF_ANOTHER_PROJECT\n",
		".cache/tool/.env": "SECRET_UNDER_CACHE\n",
		"ws/.env":          "SECRET_OF_THE_WORKSPACE\n",
		".gitconfig":       "[user]\n\tname = Agent\n\temail = agent@example.com\n[init]\n\tdefaultBranch = main\n",
	})
	return l
}

// checkReadView checks what a session of readViewScript printed.
func checkReadView(t *testing.T, out string) {
	t.Helper()
	if strings.Contains(out, "SECRET_") {
		t.Errorf("the shell read a .env that deny_read **/.env covers:\n%s", out)
	}
	for _, want := range []string{"committed\n", "hello from the dependency\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the day's work failed in the view, want %q in:\n%s", want, out)
		}
	}
}

func TestExecReadViewDenyEnv(t *testing.T) {
	harness.RequireLandlock(t)
	requireGit(t)
	l := readViewLayout(t, harness.CanonicalTemp(t))
	env := append(execEnv(t, l.ws), append(l.env(), gitEnvNoIdentity()...)...)
	env = append(env, "DSH_FS_TEST_HOME="+l.home)
	harness.WriteSystemConfig(t, env, "deny_read: [\"**/.env\"]\n")
	code, stdout, stderr := execSh(t, env, l.ws, fenced(l.ws), readViewScript+"\ndsh-fs policy --verbose")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	checkReadView(t, stdout)
	for _, want := range []string{"read view for **/.env: /home", "nor in " + l.gocache, "(bound back, not walked)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("policy, want %q in:\n%s", want, stdout)
		}
	}
}

func TestExecReadViewDenyEnvAgent(t *testing.T) {
	requireUserNamespaces(t)
	harness.RequireLandlock(t)
	requireGit(t)
	bin, dir := harness.UnprivilegedBin(t)
	l := readViewLayout(t, dir)
	for _, d := range []string{l.proxy, l.home} {
		chownTree(t, d)
	}
	system := filepath.Join(dir, "etc")
	harness.WriteTree(t, system, map[string]string{"config.yaml": "deny_read: [\"**/.env\"]\n"})
	goBin, _ := exec.LookPath("go")
	c := exec.Command(bin, "exec", "--cwd", l.ws, "--tmp=false", "--", "sh", "-c", readViewScript)
	c.Dir = l.ws
	c.Env = append(agentExecEnv(t, bin, system, "PATH="+filepath.Dir(bin)+":"+filepath.Dir(goBin)+":/usr/bin:/bin",
		"DSH_FS_TEST_HOME="+l.home), append(l.env(), gitEnvNoIdentity()...)...)
	asAgent(t, c)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("exec as %s: %v\n%s", agentUserName, err, out)
	}
	checkReadView(t, string(out))
}

// gitEnvNoIdentity keeps the machine's git config out, so git's identity
// comes from the home folder's .gitconfig alone.
func gitEnvNoIdentity() []string {
	return []string{"GIT_CONFIG_NOSYSTEM=1", fmt.Sprintf("GIT_AUTHOR_DATE=%s", "2026-01-01T00:00:00Z")}
}
