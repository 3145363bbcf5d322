//go:build unix

package tty

import "golang.org/x/sys/unix"

// Modes are the person's terminal's modes and window size, which the
// session's terminal starts with.
type Modes struct {
	Termios unix.Termios `json:"termios"`
	Size    unix.Winsize `json:"size"`
}
