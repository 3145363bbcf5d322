package main

// ls --recursive walks by handle (issue 12): it goes deeper than
// PATH_MAX. These run the real command.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// lsResult is the part of an ls result these tests look at.
type lsResult struct {
	OK      bool `json:"ok"`
	Entries []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"entries"`
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
}

func decodeLs(t *testing.T, out string) lsResult {
	t.Helper()
	var res lsResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("ls result is not JSON: %v\n%.500s", err, out)
	}
	return res
}

// mkdirChain makes depth nested folders below dir by handle (mkdirat in
// the folder made before, never a path), each name width bytes, and a
// file leaf.txt in the deepest. It returns the names, top first.
func mkdirChain(t *testing.T, dir string, depth, width int) []string {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range depth {
		name := fmt.Sprintf("%0*d", width, i)
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd, names = next, append(names, name)
	}
	leaf, err := unix.Openat(fd, "leaf.txt", unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(leaf)
	unix.Close(fd)
	return names
}

// TestLsDeeperThanPathMax lists a tree whose deepest path is longer than
// PATH_MAX: every folder is listed, by its handle, and the deepest file
// is there; nothing fails.
func TestLsDeeperThanPathMax(t *testing.T) {
	bin := procBin(t)
	ws := t.TempDir()
	const depth, width = 250, 20
	names := mkdirChain(t, ws, depth, width)
	deepest := strings.Join(names, "/") + "/leaf.txt"
	if len(ws)+len(deepest) <= unix.PathMax {
		t.Fatalf("the tree is only %d bytes deep", len(ws)+len(deepest))
	}
	code, _, out, errs := procRun(t, procCmd(bin, procEnv(t, ws), ws, "ls", "--recursive"), nil)
	if code != 0 {
		t.Fatalf("ls --recursive: exit %d\nstdout: %.500s\nstderr: %s", code, out, errs)
	}
	res := decodeLs(t, out)
	if len(res.Entries) != depth+1 || res.Total != depth+1 || res.Truncated {
		t.Errorf("%d entries, total %d, truncated %v; want %d, not truncated", len(res.Entries), res.Total, res.Truncated, depth+1)
	}
	if last := res.Entries[len(res.Entries)-1]; last.Name != deepest || last.Type != "file" {
		t.Errorf("last entry %.80q… (%d bytes, %s), want the leaf (%d bytes)", last.Name, len(last.Name), last.Type, len(deepest))
	}
}
