package sbpltest

import (
	"os"
	"path/filepath"
	"strings"
)

// Lay writes the scenario's layout under work.
func (s Scenario) Lay(work string) error {
	for _, f := range s.Files {
		p := filepath.Join(work, filepath.FromSlash(f.Name))
		if strings.HasSuffix(f.Name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
