// Command embedder is a program that embeds dsh-fs's public API, built
// and run by TestEmbedderKeepsItsOwnWrites: it writes inside its
// workspace and outside it through the facade, then outside it itself.
//
//	embedder WORKSPACE OUTSIDE [restrict]
//
// With "restrict" it first calls Sandbox.RestrictProcess, the one
// function that puts the process under the kernel layer. It prints one
// line per step and exits 0 unless it could not run a step at all.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dshfs/dsh-fs/pkg/fsops"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

func main() {
	ws, outside := os.Args[1], os.Args[2]
	sb, err := sandbox.Open(sandbox.Options{Dir: ws})
	if err != nil {
		fmt.Println("open:", sandbox.Code(err), err)
		os.Exit(1)
	}
	if len(os.Args) > 3 && os.Args[3] == "restrict" {
		if err := sb.RestrictProcess(); err != nil {
			fmt.Println("restrict:", sandbox.Code(err), err)
			os.Exit(1)
		}
	}
	if _, err := fsops.Write(sb, "inside.txt", []byte("through the facade\n"), nil); err != nil {
		fmt.Println("facade inside:", sandbox.Code(err), err)
	} else {
		fmt.Println("facade inside: ok")
	}
	_, err = fsops.Write(sb, filepath.Join(outside, "facade.txt"), []byte("pwned\n"), nil)
	fmt.Println("facade outside:", sandbox.Code(err))
	if err := os.WriteFile(filepath.Join(outside, "host.txt"), []byte("the host's own\n"), 0o644); err != nil {
		fmt.Println("host outside:", err)
	} else {
		fmt.Println("host outside: ok")
	}
}
