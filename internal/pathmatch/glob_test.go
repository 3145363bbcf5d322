package pathmatch

import "testing"

func TestMatchGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		// "**" matches zero or more components.
		{"**/.git/**", ".git", true},
		{"**/.git/**", ".git/config", true},
		{"**/.git/**", "sub/.git/hooks/x", true},
		{"**/.git/**", "a/b/c/.git", true},
		{"**/.git/**", ".gitignore", false},
		{"**/.git/**", "x.git/config", false},
		{"**", "", true},
		{"**", "a/b/c", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"**/x/**/y", "x/y", true},
		{"**/x/**/y", "p/x/q/r/y", true},
		{"**/x/**/y", "p/x/q/r/y/z", false},
		{"**/.bashrc", ".bashrc", true},
		{"**/.bashrc", "a/b/.bashrc", true},
		{"**/.bashrc", "a/b/.bashrc.bak", false},
		// "*" never crosses a "/".
		{"*", "a", true},
		{"*", "a/b", false},
		{"*.go", "x.go", true},
		{"*.go", "d/x.go", false},
		{"d/*.go", "d/x.go", true},
		{"d/*", "d/e/f", false},
		{"?", "a", true},
		{"?", "/", false},
		// A folder glob matches the folder itself.
		{".vscode/**", ".vscode", true},
		{".vscode/**", ".vscode/settings.json", true},
		{".vscode/**", "a/.vscode/settings.json", false},
		{".vscode/**", ".vscodex", false},
		// Anchored, absolute and relative spellings split the same way.
		{"/home/u/.ssh/**", "/home/u/.ssh/id_rsa", true},
		{"/home/u/.ssh/**", "/home/u/.sshx/id_rsa", false},
		{"**/secrets/**", "/ws/secrets", true},
		{"**/secrets/**", "/ws/a/secrets/k", true},
		{"**/secrets/**", "/ws/secretsx/k", false},
		{".mcp.json", ".mcp.json", true},
		{".mcp.json", "a/.mcp.json", false},
		{"[ab]", "a", true},
		{"[^ab]", "a", false},
		// A malformed pattern matches nothing.
		{"[", "[", false},
		{"[", "a", false},
		{"**/[", "x/[", false},
		{"a/[-]/b", "a/-/b", false},
		{"\\", "\\", false},
	} {
		if got := Match(tc.pattern, tc.name); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
		}
	}
}
