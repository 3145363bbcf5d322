package sandbox

import (
	"testing"
)

// eachWalk runs the case f twice: with the resolver's one-call openat2
// path allowed, and with the component walk alone, as on a kernel
// without openat2. Both must give the same answers.
func eachWalk(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	t.Run(name+"/openat2", f)
	t.Run(name+"/components", func(t *testing.T) {
		noOpenat2.Store(true)
		t.Cleanup(func() { noOpenat2.Store(false) })
		f(t)
	})
}
