package child

import (
	"os"
	"syscall"
)

// InitSignals are the signals passed on to the session's first process,
// which passes them on to CMD: the ones dsh-fs exec forwards, and
// SIGWINCH for a session without a terminal of its own (with one, the
// kernel sends it).
var InitSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH}
