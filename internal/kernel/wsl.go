package kernel

import "strings"

// WSLVersion says which Windows Subsystem for Linux a kernel is by its
// release string (/proc/sys/kernel/osrelease, or the line of
// /proc/version): 1 for WSL1, whose "kernel" is Windows translating
// system calls, with no Landlock and no namespaces ("4.4.0-19041-Microsoft");
// 2 for WSL2, a real Linux kernel in a virtual machine
// ("5.15.153.1-microsoft-standard-WSL2", "4.19.128-microsoft-standard");
// 0 for any other kernel.
func WSLVersion(release string) int {
	r := strings.ToLower(release)
	switch {
	case !strings.Contains(r, "microsoft"):
		return 0
	case strings.Contains(r, "wsl2") || strings.Contains(r, "microsoft-standard"):
		return 2
	}
	return 1
}
