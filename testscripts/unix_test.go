//go:build !windows

package testscripts

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// scriptsDir is the folder of the scripts: this one (on Windows, copies
// rewritten for its spelling of paths, windows_test.go).
func scriptsDir(*testing.T) string { return "." }

// osSetup sets nothing on Unix.
func osSetup(*testscript.Env) {}
