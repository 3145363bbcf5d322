package sandbox_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"

	"github.com/dshfs/dsh-fs/pkg/fsops"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// A program opens the policy once, for its workspace, and runs every file
// operation under it. A write outside the writable roots is refused with
// the command's code, and nothing is written.
func Example() {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	sb, err := sandbox.Open(sandbox.Options{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sb.Mode())
	real, _ := filepath.EvalSymlinks(dir)
	fmt.Println(sb.Dir() == real, slices.Contains(sb.WritableRoots(), real))

	if _, err := fsops.Write(sb, "notes.md", []byte("hello\n"), nil); err != nil {
		log.Fatal(err)
	}
	_, err = fsops.Write(sb, "/usr/dsh-fs-example.txt", []byte("pwned\n"), nil)
	fmt.Println(sandbox.Code(err))
	// Output:
	// workspace-write
	// true true
	// FS_SANDBOX_DENIED
}

// Options narrow the trusted policy, never widen it: a read-only sandbox
// refuses every mutation.
func ExampleOpen_readOnly() {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	sb, err := sandbox.Open(sandbox.Options{Dir: dir, Mode: sandbox.ReadOnly})
	if err != nil {
		log.Fatal(err)
	}
	_, err = fsops.Write(sb, "notes.md", []byte("hello\n"), nil)
	fmt.Println(sandbox.Code(err))
	_, err = os.Stat(filepath.Join(dir, "notes.md"))
	fmt.Println(os.IsNotExist(err))
	// Output:
	// FS_SANDBOX_DENIED
	// true
}

// Code gives the stable code of any error of the facade, as the command's
// JSON names it.
func ExampleCode() {
	dir, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	sb, err := sandbox.Open(sandbox.Options{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	_, err = fsops.Read(sb, "missing.txt", nil)
	fmt.Println(sandbox.Code(err) == sandbox.CodeNotFound, err)
	fmt.Printf("%q\n", sandbox.Code(nil))
	// Output:
	// true read: missing.txt: no such file or directory
	// ""
}
