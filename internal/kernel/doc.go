// Package kernel is the kernel's own mechanisms that dsh-fs builds its
// layers on: Landlock's ABI and rulesets, seccomp filters and the
// assembler that builds them, dropping privileges, the loopback of a new
// network namespace, and the verified /proc that descriptors are read
// back through. It holds no policy: what to leave writable, and when, is
// internal/sandbox's and internal/session/supervisor's to say. Each layer
// is readied first as a value that restricts nothing (a Landlock ruleset's
// descriptor, seccomp programs, the privileges to drop), which a process
// installs on itself later, for good, and what it starts inherits: the
// session's first process with plain system calls
// (internal/session/rawinit), the file tool on every thread of its own
// process (RestrictAllThreads).
package kernel
