package supervisor

import (
	"errors"
	"os"
)

// On Windows dsh-fs exec does not run: none of the layers of a session
// exists there (docs/design.md §10, On Windows), and a shell started
// with none would be an unfenced shell that looks fenced. exec refuses
// and says what to do instead: run dsh-fs inside WSL2.

// Run refuses on Windows (Unavailable) and starts nothing.
func Run(Options) (int, error) { return 0, Unavailable() }

// Entry handles nothing on Windows: the hidden entry points are a
// session's, and no session runs here.
func Entry([]string, Caller) (status int, handled bool) { return 0, false }

// SocketPair refuses on Windows: there is no session to pass a channel
// to.
func SocketPair() (*os.File, *os.File, error) {
	return nil, nil, errors.New("no dsh-fs exec session on Windows")
}
