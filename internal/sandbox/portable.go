//go:build darwin || (linux && dshportable)

package sandbox

import (
	"errors"
	"sync/atomic"
)

// The portable build (see doc.go): macOS, and Linux under -tags
// dshportable, with every Linux accelerator off. Paths are opened by the
// component walk alone and temp files are named.

// Accelerated reports whether this build uses Linux's accelerators
// (openat2, O_TMPFILE): false here, where the portable walk and a named
// temp file serve.
func Accelerated() bool { return false }

// openat2Func has nothing to call in the portable build.
type openat2Func = func()

// noOpenat2 is always true in effect here; tests that set it change
// nothing.
var noOpenat2 atomic.Bool

// walkAtOnce is openat2's one-call walk, which the portable build does
// not have: false, so the component walk gives every answer.
func walkAtOnce(string, walkSpec) (walked, bool) { return walked{}, false }

// openUnnamed has no O_TMPFILE to use: the caller makes a named temp
// file with O_EXCL, which Discard removes on every error path.
func openUnnamed(int, uint32) (int, error) { return -1, errors.ErrUnsupported }

// link is never reached: every temp file here has a name.
func (t *Temp) link(string) error { return errors.ErrUnsupported }
