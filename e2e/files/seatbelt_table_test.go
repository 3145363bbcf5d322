package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt/sbpltest"
)

// TestFileToolSeatbeltTable runs the file cases of the shared Seatbelt
// table (sbpltest.Scenarios: read, write, mkdir, rm, mv) with the file
// tool, each a dsh-fs call of its own under the scenario's policy: the
// fence must give each its expected verdict, as the evaluator of the
// macOS profile and a Linux exec session do (e2e/exec,
// TestExecSeatbeltTable). A read is allowed only where it gives the
// file's content. The socket and network cases are the shell's alone.
func TestFileToolSeatbeltTable(t *testing.T) {
	scenarios, err := sbpltest.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			work := harness.CanonicalTemp(t)
			if s.Under != "" {
				work = harness.TempUnder(t, s.Under)
			}
			if err := s.Lay(work); err != nil {
				t.Fatal(err)
			}
			ws := filepath.Join(work, "ws")
			env := harness.Env(t, ws)
			harness.WriteSystemConfig(t, env, s.ConfigAt(work))
			for _, c := range s.Cases {
				p := filepath.Join(work, filepath.FromSlash(c.Path))
				var args []string
				want := ""
				switch c.Op {
				case sbpltest.OpRead:
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					args, want = []string{"read", p}, strings.TrimSpace(string(b))
				case sbpltest.OpWrite:
					args = []string{"write", p, "--content", "x", "--overwrite"}
				case sbpltest.OpMkdir:
					args = []string{"mkdir", p}
				case sbpltest.OpRm:
					args = []string{"rm", p}
				case sbpltest.OpMv:
					args = []string{"move", p, p + ".moved"}
				default:
					continue
				}
				ran++
				code, _, out, errs := harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, args...), nil)
				got := code == 0 && strings.Contains(out, want)
				if got != c.Allow {
					t.Errorf("%s: the file tool says allow=%t (exit %d)\n%s%s", c, got, code, out, errs)
				}
			}
		})
	}
	if ran == 0 {
		t.Fatal("no file case in the table")
	}
}
