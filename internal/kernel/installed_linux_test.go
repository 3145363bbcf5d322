package kernel

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/session/rawinit"
)

// runInstalled runs test, a test of this binary, in a child whose layers
// are installed as a session's are: rawinit.Start forks it, it installs
// layers on itself with plain system calls, and it executes this binary
// again. stdin, when not -1, is the child's descriptor 0, else
// /dev/null opened to read (the Go runtime opens it for writing when 0
// is closed, which a write layer refuses). It returns
// what the child printed, and fails the test unless the child's test
// passed.
func runInstalled(t *testing.T, layers rawinit.Layers, stdin int, test string, env ...string) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if stdin == -1 {
		null, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer null.Close()
		stdin = int(null.Fd())
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := rawinit.Start(rawinit.Spec{Ctty: -1, Layers: layers, Path: bin,
		Argv:  []string{bin, "-test.run=^" + test + "$", "-test.v"},
		Env:   append(os.Environ(), append([]string{"GORACE=atexit_sleep_ms=0"}, env...)...),
		Files: []int{stdin, int(w.Fd()), int(w.Fd())}})
	w.Close()
	if err != nil {
		t.Fatalf("%s: starting it with its layers: %v", test, err)
	}
	out, err := io.ReadAll(r)
	status, _, werr := p.Wait()
	if err != nil || werr != nil || status != 0 || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s under its installed layers: status %d, %v, %v\n%s", test, status, err, werr, out)
	}
	return string(out)
}
