package toolchains

import (
	"os"
	"testing"
)

// BenchmarkKeyOf is the key of this machine's toolchains, made at every
// exec start beside the plan, which waits for it (Find).
func BenchmarkKeyOf(b *testing.B) {
	env := os.Environ()
	for b.Loop() {
		keyOf(env)
	}
}
