package sandbox

import (
	"fmt"
	"os"
	"testing"
)

// TestMain skips this package's tests on Windows: they are written for
// Unix (their layouts under t.TempDir, whose removal fails under Wine 8;
// symlinks, which Wine 8 cannot make; paths from "/"), and run on Linux
// and macOS. On Windows the fence is tested through internal/fsys (its
// calls, the names it refuses, identity) and internal/fsops
// (TestWindows*: the file tool through the fence, the path table).
func TestMain(m *testing.M) {
	fmt.Println("skipped on Windows: the fence's tests are Unix's; see internal/fsys and internal/fsops's TestWindows*")
	os.Exit(0)
}
