//go:build !unix

package layout

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// What only a dsh-fs exec session makes on disk, and no session runs
// here (on Windows, dsh-fs runs the shell inside WSL2): each refuses or
// finds nothing. The plan itself is computed as elsewhere, so policy
// shows what it would hold.

var errNoSession = errors.New("no dsh-fs exec session on " + runtime.GOOS)

// MakeOverlays refuses here.
func MakeOverlays(string, []plan.Cache) ([]plan.Overlay, error) { return nil, errNoSession }

// ResetOverlay refuses here.
func ResetOverlay(plan.Overlay) error { return errNoSession }

// RemoveTree refuses here.
func RemoveTree(string) error { return errNoSession }

// MakePlaceholders refuses here.
func MakePlaceholders(*MountPlan) error { return errNoSession }

// RemovePlaceholders has nothing to remove here.
func RemovePlaceholders([]Placeholder) {}

// readBoundSockets finds no bound sockets here.
func readBoundSockets() ([]string, error) { return nil, errNoSession }

// linkedID finds no identity here: a file's links are not counted.
func linkedID(string) (fileID, bool) { return fileID{}, false }

// exeIdentity is the executable's size and modification time here.
func exeIdentity(exe string) string {
	fi, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" %d %d", fi.Size(), fi.ModTime().UnixNano())
}
