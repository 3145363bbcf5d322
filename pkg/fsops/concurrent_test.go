package fsops_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dshfs/dsh-fs/pkg/fsops"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// TestConcurrentCalls: one Sandbox serves calls from many goroutines at
// once, each call with a fence of its own (run it with -race), and a
// refusal in one leaves the others' calls alone; a search walks the tree
// while the others change it.
func TestConcurrentCalls(t *testing.T) {
	sb, err := sandbox.Open(sandbox.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("d%d/f.txt", i)
			if _, err := fsops.Write(sb, name, []byte("v1\n"), &fsops.WriteOptions{Mkdir: true}); err != nil {
				t.Error(err)
				return
			}
			r, err := fsops.Read(sb, name, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := fsops.Edit(sb, name, []fsops.Replacement{{Old: "v1", New: "v2"}}, &fsops.EditOptions{IfMatch: r.SHA256}); err != nil {
				t.Error(err)
			}
			if _, err := fsops.Write(sb, "/usr/dsh-fs-concurrent.txt", nil, nil); sandbox.Code(err) != sandbox.CodeDenied {
				t.Errorf("outside: %v", err)
			}
			if r, err := fsops.Read(sb, name, nil); err != nil || r.Content != "v2\n" {
				t.Errorf("%s: %+v, %v", name, r, err)
			}
			if g, err := fsops.Grep(sb, "v2", []string{name}, nil); err != nil || g.Total != 1 {
				t.Errorf("grep %s: %+v, %v", name, g, err)
			}
			if _, err := fsops.Find(sb, "*.txt", "", nil); err != nil {
				t.Errorf("find while the others write: %v", err)
			}
		})
	}
	wg.Wait()
}
