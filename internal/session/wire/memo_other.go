//go:build !linux

package wire

import "errors"

// Remember sends nothing here and says so: a remember travels in a
// sealed memfd, which this OS does not have, and a file whose content
// could still change is no memory of a read. The read goes on; a write
// later refused as stale shows no diff to what was read.
func Remember(fd int, content []byte) error {
	return errors.New("remembering a read needs a sealed memfd, which this OS does not have")
}

// readMemo takes no remember here: no sender on this OS sends one, and a
// descriptor that is not a sealed memfd is refused as on Linux.
func readMemo(fd int) ([]byte, bool) { return nil, false }
