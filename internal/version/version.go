// Package version is this build's version, from the build info the Go
// toolchain embeds: what dsh-fs version prints and the MCP server reports.
package version

import (
	"runtime"
	"runtime/debug"
)

// Info is what `dsh-fs version` reports, from the build info the Go
// toolchain embeds: the module version (v1.2.3 from `go install …@v1.2.3`,
// "(devel)" from a checkout) and the commit when the build recorded it.
type Info struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// Build is this build's version.
func Build() Info {
	v := Info{Version: "(devel)", Go: runtime.Version()}
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

func (v Info) String() string {
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
