package readme

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// readmeBlock is a fenced block of README.md: its info string ("sh",
// "sh template", "json", …) and its text.
var readmeBlock = regexp.MustCompile("(?ms)^```([^\\n]*)\\n(.*?)^```$")

// TestReadmeBlocksRun: every block of README.md marked `sh` runs as
// written, in order, in one shell, on a machine with no dsh-fs on it: a
// fresh, empty home for root (the user database's home, which the
// trusted user file lives in), the machine's /etc/dsh-fs hidden, the
// binaries built by the README's own install block from this checkout.
// A block marked `sh template` is not run; its first line must say what
// the reader supplies. Before, the agents quickstart exported a session
// file the README never made, and the harness recipe wrote into a folder
// nothing created: both failed when pasted.
func TestReadmeBlocksRun(t *testing.T) {
	harness.RequireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root for a private mount namespace with a fresh home")
	}
	for _, tool := range []string{"unshare", "go", "git", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	readme := harness.ReadFile(t, filepath.Join(harness.RepoRoot, "README.md"))
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	runnable := 0
	for _, m := range readmeBlock.FindAllStringSubmatch(readme, -1) {
		info, body := strings.TrimSpace(m[1]), m[2]
		switch {
		case info == "sh":
			runnable++
			script.WriteString("echo '== README block " + strings.Repeat("#", runnable) + "'\n" + body + "\n")
		case info == "sh template":
			if !strings.HasPrefix(body, "# template: ") {
				t.Errorf("README.md: a `sh template` block must start with '# template: ' and what the reader supplies:\n%s", body)
			}
		case info == "" || info == "sh " || strings.HasPrefix(info, "bash") || info == "shell":
			t.Errorf("README.md: mark every shell block `sh` (it runs as written) or `sh template`, not %q:\n%s", info, body)
		}
	}
	if runnable < 4 {
		t.Fatalf("README.md has %d runnable blocks; the test reads none of the quickstarts", runnable)
	}
	// The Go caches are the machine's (a fresh home would download and
	// build everything again), reached through binds made before the home
	// is hidden.
	caches := t.TempDir()
	goEnv, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	paths := strings.Fields(string(goEnv))
	if len(paths) != 2 {
		t.Fatalf("go env GOCACHE GOMODCACHE: %q", goEnv)
	}
	for _, d := range []string{"gocache", "gomodcache"} {
		os.MkdirAll(filepath.Join(caches, d), 0o755)
	}
	goBin, _ := exec.LookPath("go")
	prologue := strings.Join([]string{
		"set -eu",
		"mount --make-rprivate /",
		`mkdir -p "` + paths[0] + `" "` + paths[1] + `"`,
		`mount --bind "` + paths[0] + `" "` + caches + `/gocache"`,
		`mount --bind "` + paths[1] + `" "` + caches + `/gomodcache"`,
		"mount -t tmpfs -o mode=0700 readme-home /root",
		"if [ -d /etc/dsh-fs ]; then mount -t tmpfs readme-etc /etc/dsh-fs; fi",
		`exec bash -c "$README_SCRIPT"`,
	}, "\n")
	c := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", prologue)
	c.Dir = harness.RepoRoot
	c.Env = []string{
		"HOME=/root", "USER=root", "LANG=C.UTF-8",
		"PATH=" + filepath.Dir(goBin) + ":/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
		"GOCACHE=" + caches + "/gocache", "GOMODCACHE=" + caches + "/gomodcache",
		"GOFLAGS=-buildvcs=false", "GOTOOLCHAIN=local", "GOPROXY=" + os.Getenv("GOPROXY"),
		"README_SCRIPT=" + script.String(),
	}
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's blocks failed: %v\n%s", err, out)
	}
	for _, want := range []string{`"ok":true,"op":"stat","path":"README.md"`, "outside the workspace: refused", "escalation refused",
		`"ok":true,"op":"edit","path":"main.go"`, "<sandbox:policy>"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want %q in the README's output:\n%s", want, out)
		}
	}
}
