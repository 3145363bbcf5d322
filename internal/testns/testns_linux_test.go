package testns

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// probeEnv names, to this test binary run again, the folder Main is to
// cover; it then runs probe there instead of the tests.
const probeEnv = "DSH_FS_TESTNS_PROBE"

// probeSeen is probe's status when the folder was covered as Main says.
const probeSeen = 7

func TestMain(m *testing.M) {
	if dir := os.Getenv(probeEnv); dir != "" {
		Main(func() int { return probe(dir) }, dir)
	}
	os.Exit(m.Run())
}

// probe is the run Main makes: dir must be an empty tmpfs, where it
// leaves a file the machine must not see.
func probe(dir string) int {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil || fs.Type != unix.TMPFS_MAGIC {
		fmt.Println("not a tmpfs:", dir, err)
		return 1
	}
	if names, err := os.ReadDir(dir); err != nil || len(names) > 0 {
		fmt.Println("not empty:", names, err)
		return 1
	}
	if err := os.WriteFile(filepath.Join(dir, "inside"), nil, 0o600); err != nil {
		fmt.Println(err)
		return 1
	}
	return probeSeen
}

// runProbe runs this test binary again with dir for Main, and returns
// its exit status and output.
func runProbe(t *testing.T, dir string) (int, string) {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), probeEnv+"="+dir)
	out, err := c.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return c.ProcessState.ExitCode(), string(out)
}

// TestMainCoversFolders: as root, the run sees an empty tmpfs where the
// machine's folder holds a file, its status is Main's, and what it
// writes there is gone with it.
func TestMainCoversFolders(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: an ordinary user's run is not moved")
	}
	dir := filepath.Join(t.TempDir(), "runtime")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "machine"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if status, out := runProbe(t, dir); status != probeSeen {
		t.Fatalf("status %d, want %d: %s", status, probeSeen, out)
	}
	names, err := os.ReadDir(dir)
	if err != nil || len(names) != 1 || names[0].Name() != "machine" {
		t.Fatalf("the machine's folder after the run: %v, %v; want machine alone", names, err)
	}
}

// TestMainRefusesUncoveredFolder: a folder that cannot be covered ends
// the run with status 2 and why, and no test runs on the machine's.
func TestMainRefusesUncoveredFolder(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: an ordinary user's run is not moved")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	status, out := runProbe(t, filepath.Join(file, "runtime"))
	if status != 2 || !strings.Contains(out, "testns:") || strings.Contains(out, "not a tmpfs") {
		t.Fatalf("status %d, output %q; want 2 and testns's reason, no probe", status, out)
	}
}
