package child

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// TestOverlayFoldersInTmpfs: a cache's overlay whose upper and work
// folders a tmpfs holds (plan.Files.OverlayMemory), applied in a mount
// namespace of its own as the session's is: what is written through it
// reads back there, stops at the tmpfs's size (ENOSPC), and reaches
// neither the cache nor the folder on disk, which stays empty.
func TestOverlayFoldersInTmpfs(t *testing.T) {
	if os.Getenv("OVERLAY_CHILD") != "" {
		t.Skip("in the child")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount (run the tests as root to cover the mount layer)")
	}
	tmp := canonTemp(t)
	makeTree(t, tmp, "cache/kept", "session/caches/")
	childInMountNamespace(t, "TestOverlayFoldersInTmpfsChild", "OVERLAY_CHILD="+tmp)
	for _, dir := range []string{"cache", "session/caches"} {
		entries, err := os.ReadDir(filepath.Join(tmp, dir))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		want := map[string]string{"cache": "kept", "session/caches": ""}[dir]
		if err != nil || strings.Join(names, " ") != want {
			t.Errorf("%s on disk after the session: %q, %v; want %q", dir, names, err, want)
		}
	}
}

// TestOverlayFoldersInTmpfsChild is TestOverlayFoldersInTmpfs's child,
// run in its own mount namespace; it does nothing elsewhere.
func TestOverlayFoldersInTmpfsChild(t *testing.T) {
	tmp := os.Getenv("OVERLAY_CHILD")
	if tmp == "" {
		t.Skip("run by TestOverlayFoldersInTmpfs in a mount namespace of its own")
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	cache, dir := filepath.Join(tmp, "cache"), filepath.Join(tmp, "session", "caches")
	o := plan.Overlay{Path: cache, Upper: filepath.Join(dir, "0", "upper"), Work: filepath.Join(dir, "0", "work")}
	if err := MountOverlayFolders(dir, 1<<20, []plan.Overlay{{Path: cache, Upper: "/elsewhere", Work: o.Work}}); err == nil {
		t.Fatal("an upper folder outside the overlays' folder was made")
	}
	if err := MountOverlayFolders(dir, 1<<20, []plan.Overlay{o}); err != nil {
		t.Fatal(err)
	}
	if err := MountOverlay(o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "new"), []byte("written"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(cache, "new")); err != nil || string(b) != "written" {
		t.Errorf("read back %q, %v", b, err)
	}
	err := os.WriteFile(filepath.Join(cache, "big"), make([]byte, 2<<20), 0o644)
	if !errors.Is(err, unix.ENOSPC) {
		t.Errorf("2 MiB into a 1 MiB tmpfs: %v, want ENOSPC", err)
	}
}
