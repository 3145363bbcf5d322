//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// TestSessionConfigNotAFile: a session may name anything as its config
// file; a FIFO with no writer must neither hang the call nor pass for an
// empty config, and a huge file is refused before it is parsed.
func TestSessionConfigNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", maxConfigBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{fifo, "not a regular file"},
		{dir, "not a regular file"},
		{big, "larger than"},
	} {
		_, err, _ := runLoad(t, loadCase{flags: []string{"--config", tc.path}})
		if fserr.CodeOf(err) != fserr.ConfigInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--config %s: err = %v, want FS_CONFIG_INVALID saying %q", filepath.Base(tc.path), err, tc.want)
		}
	}
}
