//go:build unix

package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// planBenchTree is a workspace of n files in folders of 100, with a git
// directory and a .env at its top, and the policy and roots of a session
// in it.
func planBenchTree(b *testing.B, n int) (policy.Policy, []sandbox.Root) {
	b.Helper()
	ws, err := sandbox.Canonical("/", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		d := filepath.Join(ws, fmt.Sprintf("d%04d", i/100))
		if i%100 == 0 {
			if err := os.Mkdir(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%06d", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, f := range []string{".git/HEAD", ".git/objects/", ".git/refs/", ".git/config", ".env"} {
		p := filepath.Join(ws, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if f[len(f)-1] != '/' {
			os.WriteFile(p, nil, 0o644)
		} else {
			os.Mkdir(p, 0o755)
		}
	}
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Protected: policy.DefaultProtected, DenyRead: []string{"**/.env"}}
	return p, []sandbox.Root{{Path: ws, Origin: "cwd"}}
}

// BenchmarkPlanMounts is the mount plan of a workspace of 20 and of
// 50,000 files: cold (no index kept: every folder read) and warm (an
// index kept by an earlier session, its folders unchanged: one lstat per
// folder). The plan's other work (the socket layer's walk, the deny_read
// globs) is included.
func BenchmarkPlanMounts(b *testing.B) {
	for _, n := range []int{20, 50000} {
		p, roots := planBenchTree(b, n)
		b.Run(fmt.Sprintf("files=%d/cold", n), func(b *testing.B) {
			defer reportCPU(b)()
			for b.Loop() {
				planMountsIndexed(p, roots, nil)
			}
		})
		b.Run(fmt.Sprintf("files=%d/warm", n), func(b *testing.B) {
			store := indexStore(b)
			time.Sleep(1100 * time.Millisecond) // no folder racy
			planMountsIndexed(p, roots, store)
			defer reportCPU(b)()
			for b.Loop() {
				planMountsIndexed(p, roots, store)
			}
		})
	}
}

// reportCPU reports the CPU time (user and system, of the whole process:
// the collector's threads too) per operation of what runs until the
// function it returns is called: on a machine shared with other work the
// wall time per operation is mostly waiting for a CPU.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}
}

func cpuTime() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
