//go:build !unix

package denials

import "os"

// readFlags open the log for reading; no session writes one here.
const readFlags = os.O_RDONLY

// ownerUID finds no owner here: a file has no uid, and a log is never
// trusted (Read is reached only through a session's record, which is
// never read here).
func ownerUID(os.FileInfo) (uint32, bool) { return 0, false }
