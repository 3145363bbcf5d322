// Package testscripts is the txtar suite of the command line: one
// behaviour of dsh-fs per *.txtar file, run by TestScripts against the
// real command (tests only). Its TestMain is the one of every process
// test (harness.Main), so this test binary is dsh-fs and its helper
// programs, and nothing is built. .ci/run runs TestScripts again against
// a CGO_ENABLED=0 build.
package testscripts

import (
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestMain makes this test binary dsh-fs and its helper programs
// (harness.Main).
func TestMain(m *testing.M) { harness.Main(m, nil) }
