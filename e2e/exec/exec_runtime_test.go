//go:build unix

package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestExecSessionsApart: two concurrent sessions of one user. The first
// writes a file into its cache's copy-on-write layer, whose upper folder
// lies in exec's runtime folder; the second finds nothing of it there,
// nor any other session's folder, and still reads its own record
// (policy inside works).
func TestExecSessionsApart(t *testing.T) {
	forEachUser(t, func(t *testing.T, s *socketSession) {
		base := "/run/dsh-fs"
		if s.agent {
			base = filepath.Join(agentRuntimeDir(t), "dsh-fs")
		}
		cache := filepath.Join(s.home, "cache")
		harness.WriteTree(t, s.home, map[string]string{"cache/.keep": ""})
		s.ownBy(cache)
		s.ownBy(filepath.Join(cache, ".keep"))
		s.config(t, "caches: ["+cache+"]\ncaches_from_toolchains: false\n")
		ready, done := filepath.Join(s.ws, "a-ready"), filepath.Join(s.ws, "b-done")
		first := s.command(t, nil, s.bin, "exec", "--cwd", s.ws, "--tmp=false", "--", "sh", "-c",
			`echo first-session-secret > `+cache+`/a-wrote && touch `+ready+`; i=0; while [ ! -e `+done+` ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done`)
		var firstOut strings.Builder
		first.Stdout, first.Stderr = &firstOut, &firstOut
		if err := first.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			os.WriteFile(done, nil, 0o644)
			first.Wait()
		}()
		for i := 0; ; i++ {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			if i > 300 {
				first.Process.Kill()
				first.Wait()
				t.Skipf("the first session wrote nothing to its cache (no overlay here?):\n%s", firstOut.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		if _, err := os.Stat(filepath.Join(cache, "a-wrote")); err == nil {
			t.Fatal("the first session wrote the person's cache itself: no overlay, nothing to test")
		}
		out := s.run(t, []string{"--tmp=false"}, `find `+base+` -name a-wrote -exec cat {} \; 2>&1; echo "sessions=$(ls -d `+base+`/session-* 2>/dev/null | wc -l)"; dsh-fs policy --verbose | grep -o '"caches_held":[a-z]*'`)
		if strings.Contains(out, "first-session-secret") {
			t.Errorf("the second session read what the first wrote to its cache layer:\n%s", out)
		}
		if !strings.Contains(out, "sessions=1\n") {
			t.Errorf("the second session sees another session's folder, or not its own:\n%s", out)
		}
		if !strings.Contains(out, `"caches_held":`) {
			t.Errorf("policy inside the second session did not read its record:\n%s", out)
		}
	})
}
