package cli

import (
	"io"
	"strings"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
)

// FormatSBPL is policy's --format for the Seatbelt profile.
const FormatSBPL = "sbpl"

// policySBPL writes the Seatbelt profile a dsh-fs exec session of s
// would apply on macOS (seatbelt.Build of supervisor.SessionPlan), its
// paths resolved here and spelled as macOS resolves them
// (seatbelt.ResolveAsMac), then its parameters as comment lines: the
// text is a profile sandbox-exec -f reads, given the -D parameters.
func policySBPL(w io.Writer, s *config.Settings) error {
	pl, err := supervisor.SessionPlan(s)
	if err != nil {
		return err
	}
	prof, err := seatbelt.Build(pl, seatbelt.ResolveAsMac)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(prof.Text)
	b.WriteString("; parameters: sandbox-exec -f PROFILE")
	for _, p := range prof.Params {
		b.WriteString(" -D" + p.Name + "=" + p.Value)
	}
	b.WriteString(" -- CMD\n")
	for _, p := range prof.Params {
		b.WriteString("; -D" + p.Name + "=" + p.Value + "\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}
