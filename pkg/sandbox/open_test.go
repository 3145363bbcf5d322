package sandbox_test

import (
	"os"
	"testing"

	"github.com/dshfs/dsh-fs/pkg/fsops"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// TestOpenNarrowsOnly: Options are session sources, as the command's
// flags are: a wider mode is refused as a widening, a bad one is bad
// usage, a missing workspace is not found, each with the command's code.
func TestOpenNarrowsOnly(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		opt  sandbox.Options
		code string
	}{
		{"narrower mode", sandbox.Options{Dir: dir, Mode: sandbox.ReadOnly}, ""},
		{"wider mode", sandbox.Options{Dir: dir, Mode: sandbox.DangerFullAccess}, sandbox.CodeDenied},
		{"no such mode", sandbox.Options{Dir: dir, Mode: "yolo"}, sandbox.CodeInvalidArgument},
		{"root outside the allowed", sandbox.Options{Dir: dir, WritableRoots: []string{"/usr"}}, sandbox.CodeDenied},
		{"missing workspace", sandbox.Options{Dir: dir + "/missing"}, sandbox.CodeNotFound},
		{"missing session file", sandbox.Options{Dir: dir, ConfigFile: dir + "/missing.yaml"}, sandbox.CodeConfigInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := sandbox.Open(tc.opt)
			if got := sandbox.Code(err); got != tc.code {
				t.Fatalf("code %q, want %q (%v)", got, tc.code, err)
			}
			if (sb == nil) != (err != nil) {
				t.Fatalf("sandbox %v with error %v", sb, err)
			}
		})
	}
}

// TestNoSandbox: an operation under a nil Sandbox is bad usage, not a
// panic and not an unfenced call.
func TestNoSandbox(t *testing.T) {
	_, err := fsops.Write(nil, "x.txt", []byte("x"), nil)
	if sandbox.Code(err) != sandbox.CodeInvalidArgument {
		t.Fatalf("code %q (%v)", sandbox.Code(err), err)
	}
	if _, err := os.Lstat("x.txt"); !os.IsNotExist(err) {
		t.Fatalf("x.txt: %v", err)
	}
}
