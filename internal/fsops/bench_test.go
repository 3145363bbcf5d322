package fsops

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// The hot internals of read and edit, measured in process so that a
// profile (go test -bench X -cpuprofile cpu.out) shows them without the
// cost of starting dsh-fs. Benchmarks only: nothing here fails on timing.
// scripts/bench.sh measures the whole command against the plain tools.

// benchText returns source-like text of about size bytes in whole lines,
// with the popular lines ("}", blank) real code has, and with line mid
// (counted from 0, if inside) replaced by mark.
func benchText(size, mid int, mark string) []byte {
	var b bytes.Buffer
	b.Grow(size + 128)
	for i := 0; b.Len() < size; i++ {
		switch {
		case i == mid:
			b.WriteString(mark + "\n")
		case i%7 == 0:
			b.WriteString("}\n")
		case i%11 == 0:
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "\tline %09d: x := compute(x, %d) // a comment\n", i, i%97)
		}
	}
	return b.Bytes()
}

// benchFence is a workspace-write fence on a fresh folder, the kernel
// layer off (Enforce empty) so the benchmark process is not restricted.
func benchFence(b *testing.B) (*sandbox.Fence, string) {
	b.Helper()
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	return sandbox.NewFence(policy.Policy{
		Mode: policy.WorkspaceWrite, Cwd: dir, Tmp: false,
		Protected: policy.DefaultProtected, MaxMode: policy.DangerFullAccess,
	}), dir
}

// benchDiffOptions are the default diff bounds (docs/design.md §2).
var benchDiffOptions = diff.Options{Context: 3, BasisMaxBytes: 1 << 20, MaxBytes: 64 << 10}

// BenchmarkReadWindow is read of a 2000-line window from the middle of a
// 10 MiB file: the whole file is hashed and its lines counted, the window
// is kept.
func BenchmarkReadWindow(b *testing.B) {
	f, dir := benchFence(b)
	content := benchText(10<<20, -1, "")
	if err := os.WriteFile(filepath.Join(dir, "big.go"), content, 0o644); err != nil {
		b.Fatal(err)
	}
	total := bytes.Count(content, []byte{'\n'})
	t, err := f.Resolve("big.go")
	if err != nil {
		b.Fatal(err)
	}
	opt := ReadOptions{Offset: total / 2, Limit: 2000, MaxBytes: 256 << 10}
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := Read(f, t, opt)
		if err != nil {
			b.Fatal(err)
		}
		if res.EndLine-res.StartLine+1 != 2000 {
			b.Fatalf("window of %d lines, want 2000", res.EndLine-res.StartLine+1)
		}
	}
}

// BenchmarkLocate is the match of edit: one unique line in 64 MiB held in
// memory.
func BenchmarkLocate(b *testing.B) {
	const old = "BENCH_MARK_LINE_OLD=1"
	content := benchText(64<<20, 600_000, old)
	b.Run("unique", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			if sp := locate(content, old, "BENCH_MARK_LINE_NEW=2"); len(sp.at) != 1 {
				b.Fatalf("%d matches, want 1", len(sp.at))
			}
		}
	})
	b.Run("no_match", func(b *testing.B) {
		// Zero matches in an LF file: the CRLF retry is skipped, one scan.
		b.SetBytes(int64(len(content)))
		for b.Loop() {
			if sp := locate(content, "BENCH_MARK_LINE_ABSENT\n", "x"); len(sp.at) != 0 {
				b.Fatal("unexpected match")
			}
		}
	})
}

// BenchmarkEditPlan is planEdit of one unique line in 1 MiB (the default
// diff basis, so the diff is computed): binary check, both hashes, the
// match and the diff. The 64 MiB case has its diff omitted for size.
func BenchmarkEditPlan(b *testing.B) {
	for _, size := range []int{1 << 20, 64 << 20} {
		const old = "\tBENCH_MARK_LINE_OLD=1"
		content := benchText(size-1024, 8000, old)
		opt := EditOptions{Edits: []Replacement{{Old: old, New: "\tBENCH_MARK_LINE_NEW=2"}}, Diff: benchDiffOptions}
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(len(content)))
			b.ReportAllocs()
			for b.Loop() {
				res, _, err := planEdit("f.go", content, opt)
				if err != nil {
					b.Fatal(err)
				}
				if res.Replacements != 1 {
					b.Fatalf("%d replacements", res.Replacements)
				}
			}
		})
	}
}

// BenchmarkDiff is the bounded diff of a 1 MiB file with one line
// changed, as write and edit compute it.
func BenchmarkDiff(b *testing.B) {
	old := benchText(1<<20-1024, 8000, "\tBENCH_MARK_LINE_OLD=1")
	new := bytes.Replace(old, []byte("LINE_OLD=1"), []byte("LINE_NEW=2"), 1)
	b.SetBytes(int64(len(old)))
	b.ReportAllocs()
	for b.Loop() {
		if r := diff.Unified("f.go", old, new, benchDiffOptions); r.Added != 1 || r.Removed != 1 {
			b.Fatalf("diff +%d -%d, want +1 -1", r.Added, r.Removed)
		}
	}
}

// BenchmarkLoadFile is edit's read of the whole locked file, about 64 MiB,
// into memory mapped for huge pages: its allocated bytes per op show
// whether the file is held once, whatever spare room its size leaves in
// the last page ("near_page_end").
func BenchmarkLoadFile(b *testing.B) {
	_, dir := benchFence(b)
	for _, tc := range []struct {
		name string
		size int
	}{
		{"page_multiple", 64 << 20},
		{"near_page_end", 64<<20 - 100},
	} {
		path := filepath.Join(dir, tc.name)
		if err := os.WriteFile(path, bytes.Repeat([]byte{'x'}, tc.size), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(tc.size))
			b.ReportAllocs()
			for b.Loop() {
				file, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				fi, _ := file.Stat()
				l, err := loadFile(file, fi.Size(), tc.name)
				if err != nil {
					b.Fatal(err)
				}
				l.release()
				file.Close()
			}
		})
	}
}

// BenchmarkWrite is a whole replacing write of 64 MiB through the fence,
// from a file: the kernel copy, the hash read back behind it, the old
// file's hash, the sync and the rename. Its time is bounded by the disk
// and by two SHA-256 passes on two cores.
func BenchmarkWrite(b *testing.B) {
	f, dir := benchFence(b)
	const size = 64 << 20
	src := filepath.Join(dir, "src")
	if err := os.WriteFile(src, bytes.Repeat([]byte("0123456789abcdef"), size/16), 0o644); err != nil {
		b.Fatal(err)
	}
	t, err := f.Resolve(filepath.Join(dir, "target"))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(t.Path, []byte("old\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		content, err := os.Open(src)
		if err != nil {
			b.Fatal(err)
		}
		res, err := Write(f, t, WriteOptions{Content: content, Overwrite: true, Diff: benchDiffOptions})
		content.Close()
		if err != nil || res.Bytes != size {
			b.Fatalf("write: %v (%+v)", err, res)
		}
	}
}
