package cli

import (
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestMain makes this test binary dsh-fs and its helper programs
// (harness.Main).
func TestMain(m *testing.M) { harness.Main(m, nil) }
