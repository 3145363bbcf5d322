//go:build !unix

package wire

import (
	"errors"
	"os"
	"runtime"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/layout"
)

// No dsh-fs exec session runs here (on Windows, dsh-fs runs the shell
// inside WSL2): there is no runtime folder, no record to write or to
// trust, and no broker. Each refuses or finds nothing, so a call of the
// file tool here is never taken for a session's.

var errNoSession = errors.New("no dsh-fs exec session on " + runtime.GOOS)

// NewBroker refuses here.
func NewBroker() (supervisor, shell *os.File, err error) { return nil, nil, errNoSession }

// CheckBroker refuses here.
func CheckBroker(int) error { return errNoSession }

// CheckApprover refuses here.
func CheckApprover(int, *Record) error { return errNoSession }

// Forward refuses here.
func Forward(int, Request) (Reply, error) { return Reply{}, errNoSession }

// Serve serves nothing here.
func Serve(*os.File, func(Request) Reply) (stop func()) { return func() {} }

// ServeAll serves nothing here.
func ServeAll(*os.File, func(Request) Reply) {}

// PeerCommandLine reads nothing here.
func PeerCommandLine(int) []string { return nil }

// lockRuntime locks nothing here.
func lockRuntime(string) func() { return func() {} }

// adoptLive adopts nothing here.
func adoptLive(*layout.MountPlan, []layout.Placeholder) {}

// supervisorGone reports false: there is no supervisor here.
func (r *Record) supervisorGone() bool { return false }

// RuntimeBase is "" here: no folder holds a record.
func RuntimeBase() string { return "" }

// Dir refuses here.
func Dir(string, []string) (string, error) { return "", errNoSession }

// checkRuntimeFolder refuses here.
func checkRuntimeFolder(string) error { return errNoSession }

// Write refuses here.
func Write(string, *Record) (string, error) { return "", errNoSession }

// EmptyFile refuses here.
func EmptyFile(string) (string, policy.DenyIdentity, error) {
	return "", policy.DenyIdentity{}, errNoSession
}

// Read refuses every record here.
func Read(path string) (*Record, error) {
	return nil, &RefusedError{Path: path, Why: errNoSession.Error()}
}

// PidNamespace has no namespace to name here.
func PidNamespace() (uint64, error) { return 0, errNoSession }

// StartTime reads no start time here.
func StartTime(int) (uint64, error) { return 0, errNoSession }
