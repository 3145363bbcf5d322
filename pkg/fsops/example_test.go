package fsops_test

import (
	"fmt"
	"log"
	"os"

	"github.com/dshfs/dsh-fs/pkg/fsops"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// workspace opens a sandbox on a new folder, and returns it with the
// function that removes the folder.
func workspace() (*sandbox.Sandbox, func()) {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	sb, err := sandbox.Open(sandbox.Options{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	return sb, func() { os.RemoveAll(dir) }
}

// Write creates a file (an existing one only with Overwrite or IfMatch);
// Edit changes it by exact text, pinned to what was read.
func Example() {
	sb, done := workspace()
	defer done()

	w, err := fsops.Write(sb, "src/greet.txt", []byte("hello\nworld\n"), &fsops.WriteOptions{Mkdir: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created:", w.Created, w.Bytes, "bytes")

	r, err := fsops.Read(sb, "src/greet.txt", nil)
	if err != nil {
		log.Fatal(err)
	}
	e, err := fsops.Edit(sb, "src/greet.txt", []fsops.Replacement{{Old: "world", New: "gopher"}},
		&fsops.EditOptions{IfMatch: r.SHA256})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(e.Diff.Text)

	// The content changed since r: the same edit again is stale.
	_, err = fsops.Edit(sb, "src/greet.txt", []fsops.Replacement{{Old: "gopher", New: "world"}},
		&fsops.EditOptions{IfMatch: r.SHA256})
	fmt.Println(sandbox.Code(err))
	// Output:
	// created: true 12 bytes
	// --- a/src/greet.txt
	// +++ b/src/greet.txt
	// @@ -1,2 +1,2 @@
	//  hello
	// -world
	// +gopher
	// FS_STALE
}

func ExampleRead() {
	sb, done := workspace()
	defer done()
	if _, err := fsops.Write(sb, "a.txt", []byte("one\ntwo\nthree\n"), nil); err != nil {
		log.Fatal(err)
	}

	r, err := fsops.Read(sb, "a.txt", &fsops.ReadOptions{Offset: 2, Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q lines %d-%d of %d, next %d\n", r.Content, r.StartLine, r.EndLine, r.TotalLines, r.NextOffset)
	// Output:
	// "two\n" lines 2-2 of 3, next 3
}

func ExampleList() {
	sb, done := workspace()
	defer done()
	for _, p := range []string{"b.txt", "a/x.go"} {
		if _, err := fsops.Write(sb, p, nil, &fsops.WriteOptions{Mkdir: true}); err != nil {
			log.Fatal(err)
		}
	}

	l, err := fsops.List(sb, ".", &fsops.ListOptions{Recursive: true})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range l.Entries {
		fmt.Println(e.Name, e.Type)
	}
	// Output:
	// a dir
	// a/x.go file
	// b.txt file
}

// Stat says whether a mutation of a path would pass the policy, without
// trying one.
func ExampleStat() {
	sb, done := workspace()
	defer done()

	for _, p := range []string{"new.txt", ".git/config", "/usr"} {
		s, err := fsops.Stat(sb, p)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s exists=%v writable=%v %q\n", p, s.Exists, s.Writable, s.WritableReason)
	}
	// Output:
	// new.txt exists=false writable=true ""
	// .git/config exists=false writable=false "protected path"
	// /usr exists=true writable=false "outside writable roots"
}

// Mkdir, Move and Remove work on names, never following a symlink at
// the end; Remove is never recursive.
func ExampleMove() {
	sb, done := workspace()
	defer done()
	if _, err := fsops.Mkdir(sb, "old", nil); err != nil {
		log.Fatal(err)
	}
	if _, err := fsops.Write(sb, "old/f.txt", []byte("x\n"), nil); err != nil {
		log.Fatal(err)
	}

	m, err := fsops.Move(sb, "old", "new")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Type, m.Destination)
	_, err = fsops.Remove(sb, "new")
	fmt.Println(sandbox.Code(err))
	// Output:
	// dir new
	// FS_IS_DIR
}

// Patch applies a unified diff (or an apply_patch envelope) to the files
// it names, all or nothing.
func ExamplePatch() {
	sb, done := workspace()
	defer done()
	if _, err := fsops.Write(sb, "a.txt", []byte("one\ntwo\n"), nil); err != nil {
		log.Fatal(err)
	}

	const patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
	p, err := fsops.Patch(sb, []byte(patch), nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range p.Files {
		fmt.Println(p.Format, f.Path, f.Action, f.Hunks, f.Diff.Added, f.Diff.Removed)
	}
	r, err := fsops.Read(sb, "a.txt", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", r.Content)
	// Output:
	// unified a.txt updated 1 1 1
	// "one\n2\n"
}

// Grep searches file contents, sorted by path and line; a truncated
// result's Cursor continues it.
func ExampleGrep() {
	sb, done := workspace()
	defer done()
	for p, content := range map[string]string{
		"src/a.go":      "package a\n\n// TODO: name it\nfunc f() {}\n",
		"src/b.go":      "package a\n\n// todo: test it\n",
		"notes/todo.md": "TODO: ship\n",
	} {
		if _, err := fsops.Write(sb, p, []byte(content), &fsops.WriteOptions{Mkdir: true}); err != nil {
			log.Fatal(err)
		}
	}

	g, err := fsops.Grep(sb, "todo", []string{"src"}, &fsops.GrepOptions{IgnoreCase: true, Context: 1, Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range g.Matches {
		fmt.Printf("%s:%d: %q after %q\n", m.Path, m.Line, m.Text, m.Before)
	}
	fmt.Println("total", g.Total, "truncated", g.Truncated, "left out", g.LeftOut)

	g, err = fsops.Grep(sb, "todo", []string{"src"}, &fsops.GrepOptions{IgnoreCase: true, After: g.Cursor})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range g.Matches {
		fmt.Printf("%s:%d: %q\n", m.Path, m.Line, m.Text)
	}

	g, err = fsops.Grep(sb, "TODO", nil, &fsops.GrepOptions{Fixed: true, Files: true, Globs: []string{"*.md"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(g.Files[0].Path, g.FilesSkipped.Glob, "left out by the glob")
	// Output:
	// src/a.go:3: "// TODO: name it" after [""]
	// total 2 truncated true left out 1
	// src/b.go:3: "// todo: test it"
	// notes/todo.md 2 left out by the glob
}

// Find lists entries by a "**" glob, sorted by path, never following a
// symlink; a file is no folder to search.
func ExampleFind() {
	sb, done := workspace()
	defer done()
	for _, p := range []string{"cmd/tool/main.go", "internal/x/x.go", "internal/x/x_test.go", "README.md"} {
		if _, err := fsops.Write(sb, p, []byte("package x\n"), &fsops.WriteOptions{Mkdir: true}); err != nil {
			log.Fatal(err)
		}
	}

	f, err := fsops.Find(sb, "**/*.go", "", &fsops.FindOptions{Type: "file"})
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range f.Entries {
		fmt.Println(e.Path, e.Size)
	}

	f, err = fsops.Find(sb, "*_test.go", "internal", &fsops.FindOptions{Lines: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f.Entries[0].Path, *f.Entries[0].Lines, "line")

	_, err = fsops.Find(sb, "*", "README.md", nil)
	fmt.Println(sandbox.Code(err))
	// Output:
	// cmd/tool/main.go 10
	// internal/x/x.go 10
	// internal/x/x_test.go 10
	// internal/x/x_test.go 1 line
	// FS_NOT_DIR
}
