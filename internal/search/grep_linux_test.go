package search

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestGrepNeverOpensDenyRead watches a deny_read file with inotify while
// grep searches its folder: no open, no read. Without deny_read the same
// search opens it, which shows the watch sees opens.
func TestGrepNeverOpensDenyRead(t *testing.T) {
	for _, deny := range []bool{true, false} {
		t.Run(fmt.Sprintf("deny_read %v", deny), func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			secret := filepath.Join(dir, "secret.txt")
			os.WriteFile(secret, []byte("needle in the secret\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "a.txt"), []byte("needle\n"), 0o644)
			p := policy.Policy{Mode: policy.ReadOnly, Cwd: dir, MaxMode: policy.ReadOnly}
			if deny {
				p.DenyRead = []string{"secret.txt"}
			}
			f := sandbox.NewFence(p)
			fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
			if err != nil {
				t.Skip("no inotify:", err)
			}
			defer unix.Close(fd)
			if _, err := unix.InotifyAddWatch(fd, secret, unix.IN_OPEN|unix.IN_ACCESS); err != nil {
				t.Fatal(err)
			}
			target, _ := f.Resolve(".")
			res, err := Grep(f, []sandbox.Target{target}, GrepOptions{Pattern: "needle", Limit: 10, MaxBytes: 1 << 20, MaxLineBytes: 100})
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4096)
			n, _ := unix.Read(fd, buf)
			opened := n > 0
			if deny {
				if opened || res.Hidden != 1 || res.Total != 1 || res.Matches[0].Path != "a.txt" {
					t.Errorf("opened %v (%d bytes of events), result %+v", opened, n, res)
				}
			} else if !opened || res.Total != 2 {
				t.Errorf("without deny_read: opened %v, total %d", opened, res.Total)
			}
		})
	}
}
