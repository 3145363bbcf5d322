package kernel

import "os"

// WSL is WSLVersion of the running kernel: its osrelease, or
// /proc/version where that cannot be read; 0 when neither can.
func WSL() int {
	for _, p := range []string{"/proc/sys/kernel/osrelease", "/proc/version"} {
		if b, err := os.ReadFile(p); err == nil {
			return WSLVersion(string(b))
		}
	}
	return 0
}
