//go:build !linux

package toolchains

// resolvedIdentity is the resolved path of the file at p and its
// identity (statIdentity's).
func resolvedIdentity(p string) (real, id string, err error) { return evalIdentity(p) }
