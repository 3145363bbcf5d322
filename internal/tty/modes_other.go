//go:build !unix

package tty

// Modes are empty where there are no Unix terminals: no dsh-fs exec
// session runs there, so a plan never carries a terminal's modes.
type Modes struct{}
