//go:build !unix

package main

import "os/exec"

// ownGroup leaves cmd as it is: there are no process groups here.
func ownGroup(*exec.Cmd) {}

// killGroup kills the server's process; what it started is not reached
// here (Windows: dsh-fs mcp waits in place of dsh-fs-mcp, so killing it
// leaves dsh-fs-mcp to see its input close).
func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
