package policy

import "testing"

func TestCheckGlob(t *testing.T) {
	for _, g := range []string{"secret/**", "**/.env", "~/.ssh/**", "a/[bc]/*.go", "/etc/x"} {
		if err := CheckGlob(g); err != nil {
			t.Errorf("CheckGlob(%q) = %v, want nil", g, err)
		}
	}
	for _, g := range []string{"secre[t/**", "a/[/b", `x\`, "**/[z-a"} {
		if err := CheckGlob(g); err == nil {
			t.Errorf("CheckGlob(%q) = nil, want malformed", g)
		}
	}
}
