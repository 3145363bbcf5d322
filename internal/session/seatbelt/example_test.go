package seatbelt_test

import (
	"fmt"
	"strings"

	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt"
)

// A session's plan becomes sandbox-exec's command line: the profile,
// its parameters (the workspace spelled /tmp/ws, passed as the real
// /private/tmp/ws), --, and CMD.
func ExampleCommand() {
	p := &plan.Plan{Path: "/bin/zsh", Argv: []string{"zsh", "-c", "make test"}, RestrictWrites: true,
		Writable: []string{"/tmp/ws"}, Files: &plan.Files{ReadOnly: []string{"/tmp/ws/.git/config"}},
		Sockets: []string{}, Network: true}
	macOS := func(path string) (string, error) {
		if strings.HasPrefix(path, "/tmp/") {
			return "/private" + path, nil
		}
		return path, nil
	}
	path, argv, err := seatbelt.Command(p, macOS)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(path)
	fmt.Println(argv[:2])
	for _, a := range argv[3:] {
		fmt.Println(a)
	}
	// Output:
	// /usr/bin/sandbox-exec
	// [sandbox-exec -p]
	// -DWRITABLE_ROOT_0=/private/tmp/ws
	// -DREAD_ONLY_0=/private/tmp/ws/.git/config
	// -DPINNED_0=/private/tmp/ws
	// -DPINNED_1=/private/tmp/ws/.git
	// --
	// /bin/zsh
	// -c
	// make test
}
