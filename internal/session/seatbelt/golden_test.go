package seatbelt_test

import (
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt/sbpltest"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
)

var update = flag.Bool("update", false, "rewrite the golden profiles of testdata/")

// testPort stands for a TCP listener's port on the host's loopback: the
// evaluator connects nowhere.
const testPort = 40001

// scenarioProfile lays out s in a folder of its own, loads the settings
// a session there would have (s's config as the trusted system file, the
// workspace as cwd, no temp roots), and returns the profile of its plan
// (supervisor.SessionPlan, seatbelt.Build) with the folder's real path.
func scenarioProfile(t *testing.T, s sbpltest.Scenario) (*seatbelt.Profile, string) {
	t.Helper()
	work, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Lay(work); err != nil {
		t.Fatal(err)
	}
	for _, sock := range s.Serve {
		l, err := net.Listen("unix", filepath.Join(work, sock))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	system, home := filepath.Join(work, "system"), filepath.Join(work, "home")
	for _, d := range []string{system, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(system, "config.yaml"), []byte(s.ConfigAt(work)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DSH_FS_CWD": filepath.Join(work, "ws"), "DSH_FS_TMP": "false", "HOME": home}
	settings, err := config.Load(config.Source{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Getwd:     func() (string, error) { return filepath.Join(work, "ws"), nil },
		Locations: config.Locations{SystemDir: system, Home: func() (string, error) { return home, nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := supervisor.SessionPlan(settings)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := seatbelt.Build(pl, seatbelt.ResolveAsMac)
	if err != nil {
		t.Fatal(err)
	}
	return prof, work
}

// TestGoldenProfiles: the profile of each scenario of the shared table
// (read-only, workspace-write with .git protected, a deny_read file, a
// socket allowed, network off, on and allowlist) is the one in
// testdata/, its parameters too, with the scenario's folder as $WORK;
// every one passes Lint. -update rewrites them.
func TestGoldenProfiles(t *testing.T) {
	scenarios, err := sbpltest.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			prof, work := scenarioProfile(t, s)
			if err := seatbelt.Lint(prof); err != nil {
				t.Fatalf("lint: %v\n%s", err, prof.Text)
			}
			var b strings.Builder
			b.WriteString(prof.Text)
			for _, p := range prof.Params {
				b.WriteString("; -D" + p.Name + "=" + p.Value + "\n")
			}
			mac, _ := seatbelt.ResolveAsMac(work)
			got := strings.ReplaceAll(b.String(), mac, "$WORK")
			golden := filepath.Join("testdata", s.Name+".sbpl")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("the profile of %s differs from %s (go test -update rewrites it):\n%s", s.Name, golden, got)
			}
		})
	}
}

// TestEvaluatorAgrees: the evaluator, on each scenario's profile, gives
// every case of the shared table its expected verdict; the Linux side
// runs the same cases in real sessions (e2e/exec,
// TestExecSeatbeltTable).
func TestEvaluatorAgrees(t *testing.T) {
	scenarios, err := sbpltest.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	resolve := seatbelt.Realpath(seatbelt.ResolveAsMac).Resolve
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			prof, work := scenarioProfile(t, s)
			params := map[string]string{}
			for _, p := range prof.Params {
				params[p.Name] = p.Value
			}
			ev, err := sbpltest.Compile(prof.Text, params)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range s.Cases {
				got, err := ev.DecideCase(c, work, testPort, resolve)
				if err != nil {
					t.Errorf("%s: %v", c, err)
				} else if got != c.Allow {
					t.Errorf("%s: the evaluator says allow=%t", c, got)
				}
			}
		})
	}
}
