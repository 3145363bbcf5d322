//go:build dshfs_testhooks

package harness

import (
	"os"

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/child"
)

// Coverage of the process tests: go test -cover -tags dshfs_testhooks.
// Under -cover every process of this test binary, the dsh-fs children
// that scripts and proc tests exec included, writes its coverage counters
// to GOCOVERDIR when it exits (testscript passes GOCOVERDIR on; Env and
// race.raceEnv do too). A child that made a mutation has put Landlock in
// place by then, and Landlock refuses every write outside the writable
// roots: the counters were lost, with an "error: coverage … emit failed"
// on stderr.
//
// GOCOVERDIR is not made a writable root: that would change what the
// fence allows and what `dsh-fs policy` prints in every test, and session
// sources (DSH_FS_WRITABLE_ROOTS, --writable-root) may not widen the
// policy anyway. Instead this test binary, and only it, tells the kernel
// layer to leave that one folder writable (sandbox.SetKernelWritableExtra,
// which only a dshfs_testhooks build has: a release build cannot widen its
// kernel layer at all); the fence still denies any dsh-fs operation there.
// init runs in every process of the test binary, before testscript.Main
// picks the command. Without the tag, cover_off.go's requireCoverHook
// refuses -cover.
func init() {
	if d := os.Getenv("GOCOVERDIR"); d != "" {
		sandbox.SetKernelWritableExtra([]string{d})
		child.SetKernelWritableExtra([]string{d})
	}
}

// requireCoverHook has nothing to require: this build has the hook.
func requireCoverHook() {}
