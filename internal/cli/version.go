package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// VersionInfo is what `dsh-fs version` reports, from the build info the Go
// toolchain embeds: the module version (v1.2.3 from `go install …@v1.2.3`,
// "(devel)" from a checkout) and the commit when the build recorded it.
type VersionInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// BuildVersion is this build's version, which the MCP server reports too.
func BuildVersion() VersionInfo {
	v := VersionInfo{Version: "(devel)", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

func (v VersionInfo) String() string {
	s := "dsh-fs " + v.Version
	if v.Commit != "" {
		s += " (" + v.Commit
		if v.Modified {
			s += ", modified"
		}
		s += ")"
	}
	return s + " " + v.Go
}

// NewCmdVersion returns the version command. It needs no policy.
func NewCmdVersion(app *App) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit and Go version of this build",
		Example: "  dsh-fs version\n  dsh-fs --version",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			app.beginStatic("version")
			v := BuildVersion()
			if app.text {
				_, err := fmt.Fprintln(app.Stdout, v)
				return err
			}
			return app.printStatic(v)
		},
	}
}
