package search

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// The search measured in process, so that a profile (go test -bench X
// -cpuprofile cpu.out) shows it without the cost of starting dsh-fs.
// Benchmarks only: nothing here fails on timing.

// BenchmarkGrepGoSource searches the Go standard library's source, a
// literal and a regular expression, with the default bounds: the walk,
// the opens and the search of every file (scripts/bench.sh compares the
// same with grep -rn and rg).
func BenchmarkGrepGoSource(b *testing.B) {
	src := filepath.Join(runtime.GOROOT(), "src")
	if _, err := os.Stat(src); err != nil {
		b.Skip("no Go source:", err)
	}
	for _, list := range []struct {
		name string
		deny []string
	}{{"no_list", nil}, {"deny_list", benchDenyList}} {
		f := sandbox.NewFence(policy.Policy{Mode: policy.ReadOnly, Cwd: src, MaxMode: policy.ReadOnly,
			Home: b.TempDir(), DenyRead: list.deny})
		t, err := f.Resolve(".")
		if err != nil {
			b.Fatal(err)
		}
		for _, pat := range []string{"ErrNotExist", `err(or)? != nil`} {
			b.Run(list.name+"/"+pat, func(b *testing.B) {
				for b.Loop() {
					res, err := Grep(f, []sandbox.Target{t}, GrepOptions{Pattern: pat, Limit: DefaultGrepLimit, MaxBytes: DefaultSearchMaxBytes, MaxLineBytes: DefaultMaxLineBytes})
					if err != nil || res.Total == 0 {
						b.Fatal(res, err)
					}
				}
			})
		}
	}
}

// benchDenyList is a harness's usual deny_read list (issue 26), the one
// scripts/bench.sh measures grep, find, stat and ls under.
var benchDenyList = []string{"~/.ssh/**", "~/.aws/**", "~/.gnupg/**", "**/.env", "**/.env.*", "**/*.pem", "**/*.key", "**/secrets/**"}
