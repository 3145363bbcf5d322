package child

import "testing"

// BenchmarkCompileFiles compiles the fixture's plan, as an ordinary
// user's start does on its path (sendSpec).
func BenchmarkCompileFiles(b *testing.B) {
	if err := mountAPIWhy(); err != nil {
		b.Skip(err)
	}
	c := opsFixture(b, -1)
	t := FilesTarget{EmptyFile: c.Empty, Dir: c.Dir, UserNamespace: true}
	for b.Loop() {
		if _, err := CompileFiles(&c.Files, t); err != nil {
			b.Fatal(err)
		}
	}
}
