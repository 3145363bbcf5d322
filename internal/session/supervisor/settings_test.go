package supervisor

import (
	"testing"

	"github.com/dshfs/dsh-fs/internal/config"
)

// sessionSettings are the settings of a session whose workspace is ws,
// from no trusted file and no variable: the defaults, workspace-write.
func sessionSettings(t *testing.T, ws string) *config.Settings {
	t.Helper()
	s, err := config.Load(config.Source{LookupEnv: func(string) (string, bool) { return "", false },
		Getwd: func() (string, error) { return ws, nil }, FlagsTrusted: true, ConfigTrusted: true,
		Locations: config.Locations{SystemDir: t.TempDir(), Home: func() (string, error) { return t.TempDir(), nil }}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
