package policy

import (
	"fmt"
	"path"
	"strings"
)

// CheckGlob reports a malformed glob (an unclosed "[", a trailing "\"):
// the fence's matcher would silently match nothing with it, so a deny_read entry
// meant to hide a secret would hide none.
func CheckGlob(pattern string) error {
	for _, part := range strings.Split(pattern, "/") {
		if part == "**" {
			continue
		}
		if _, err := path.Match(part, ""); err != nil {
			return fmt.Errorf("malformed glob %q", pattern)
		}
	}
	return nil
}
