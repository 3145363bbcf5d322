// Package kernel is the kernel's own mechanisms that dsh-fs builds its
// layers on: Landlock's ABI and rulesets, seccomp filters and the
// assembler that builds them, dropping privileges, the loopback of a new
// network namespace, and the verified /proc that descriptors are read
// back through. It holds no policy: what to leave writable, and when, is
// internal/sandbox's and internal/session/supervisor's to say. Each layer
// is readied first as a value that restricts nothing (a Landlock ruleset's
// descriptor, seccomp programs, the privileges to drop), which a process
// installs later, on the calling thread or on every thread, for good,
// and what it starts inherits: through the functions here, or with plain
// system calls (the session's PID 1).
package kernel
