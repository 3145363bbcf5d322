// Package files holds the process tests of what a file operation may
// touch (tests only): the path table, every operation on every kind of
// path through the CLI (paths_test.go) and through MCP
// (mcp_paths_test.go, which shares its layout and cases), ls deeper than
// PATH_MAX and over unreadable folders, file permissions as an
// unprivileged user, and writes refused when /proc cannot be verified.
package files
