// Package kernel is the kernel's own mechanisms that dsh-fs builds its
// layers on: Landlock's ABI and rulesets, seccomp filters and the
// assembler that builds them, dropping privileges, the loopback of a new
// network namespace, and the verified /proc that descriptors are read
// back through. It holds no policy: what to leave writable, and when, is
// internal/sandbox's and internal/session/supervisor's to say. Every restriction made
// here is on this process and what it starts, for good.
package kernel
