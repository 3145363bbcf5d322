// Command session is a start-up floor for scripts/bench.sh: the least one
// Go process can do to run a command the way `dsh-fs exec` does, with no
// second Go program. It is measured, never shipped.
//
//	session WS CMD [ARG...]
//
// As root, on one locked thread of its own it takes a private mount and
// network namespace (a thread's, not the process's: root may unshare
// those from a thread of a Go program), brings the loopback up, makes a
// read-only copy of / with WS and /tmp writable, and readies a Landlock
// ruleset (the root read and execute, WS and /tmp everything) and a
// seccomp filter. It then forks a PID 1 of a new PID namespace from that
// thread with system calls alone (rawinit.go): /proc mounted, the layers
// applied, CMD forked and executed in WS, reaped, the rest of the
// namespace killed, CMD's status written back. The thread is never
// unlocked, so the runtime ends it rather than use it again.
//
// An ordinary user may not unshare a user namespace from a thread of a
// multithreaded program, so there the PID 1 is forked into new user,
// mount, network and PID namespaces and makes the same mounts and the
// loopback itself, from a list of plain system calls (runUser).
//
// What it leaves out of a real session: the policy and its plan, the
// record, the protected paths, the terminal, the caches, the git guard.
//
// It exists on Linux alone; elsewhere it says so and exits 1.
package main
