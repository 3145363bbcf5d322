package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// TestShellLeansOnNoCLI: internal/shell, exec's supervisor, imports
// neither cobra nor the CLI (issue 27): the front end hands it the
// session's options and a Caller, and it knows no flag. The packages it
// depends on, directly or not, are what `go list -deps` says.
func TestShellLeansOnNoCLI(t *testing.T) {
	const shellPkg = "github.com/dshfs/dsh-fs/internal/shell"
	c := exec.Command("go", "list", "-deps", "./internal/shell")
	c.Dir = repoRoot
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list -deps ./internal/shell: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != shellPkg {
		t.Fatalf("go list -deps did not list %s last: %q", shellPkg, deps)
	}
	for _, dep := range deps {
		if dep == "github.com/spf13/cobra" || strings.HasPrefix(dep, "github.com/spf13/cobra/") ||
			dep == "github.com/dshfs/dsh-fs/internal/cli" || strings.HasPrefix(dep, "github.com/dshfs/dsh-fs/internal/cli/") {
			t.Errorf("%s depends on %s", shellPkg, dep)
		}
	}
}
