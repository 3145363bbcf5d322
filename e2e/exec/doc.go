//go:build unix

// Package exec holds the process tests of dsh-fs exec (tests only): the
// session's fence on the shell and everything it starts, the terminal
// (TIOCSTI, the leftover that takes the terminal, resize, tty
// escalation), seccomp without openat2, the privileges and device nodes
// the shell never holds, Unix sockets, the network modes, the mount
// layer, the read-only trees, the git guard, the broker and approver,
// the session's caches, a killed supervisor and its orphans, and the
// ordinary user (user_test.go) the root-run tests start sessions as.
//
// The escalation prompt on a terminal (tty_test.go) lives here with
// exec_tty's pseudo-terminal helpers, which only these tests use. The
// helper programs that run inside a session (broker-send, unix-dial,
// unix-serve, tcp-dial, tiocsti-push, tty-thief) are registered by this
// package's TestMain.
package exec
