// Package fsystest is for tests only: what the Windows tests of
// internal/fsys and internal/fsops make on disk that Go's os package
// cannot, a junction (MakeJunction). It imports nothing of this module.
package fsystest
