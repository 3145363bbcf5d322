package diff_test

import (
	"encoding/json"
	"fmt"

	"github.com/dshfs/dsh-fs/pkg/diff"
)

func ExampleUnified() {
	d := diff.Unified("greet.txt", []byte("hello\nworld\n"), []byte("hello\ngopher\n"), diff.Options{Context: 3})
	fmt.Println(d.Added, d.Removed)
	fmt.Print(d.Text)
	// Output:
	// 1 1
	// --- a/greet.txt
	// +++ b/greet.txt
	// @@ -1,2 +1,2 @@
	//  hello
	// -world
	// +gopher
}

// A Result marshals to the command's JSON shapes: a side too large or
// binary omits the diff, with no counts.
func ExampleResult_MarshalJSON() {
	small := diff.Options{BasisMaxBytes: 4}
	for _, d := range []diff.Result{
		diff.Unified("a", []byte("x\n"), []byte("y\n"), diff.Options{}),
		diff.Unified("a", []byte("hello\n"), []byte("world\n"), small),
	} {
		b, err := json.Marshal(d)
		if err != nil {
			panic(err)
		}
		fmt.Println(string(b))
	}
	// Output:
	// {"added":1,"removed":1,"text":"--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x\n+y\n"}
	// {"omitted":"basis_too_large"}
}
