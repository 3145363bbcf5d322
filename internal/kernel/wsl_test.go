package kernel

import "testing"

// WSLVersion tells WSL1 from WSL2 and from any other kernel by what
// osrelease and /proc/version say there.
func TestWSLVersion(t *testing.T) {
	for _, tc := range []struct {
		release string
		want    int
	}{
		{"4.4.0-19041-Microsoft", 1},
		{"4.4.0-22621-Microsoft\n", 1},
		{"Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) ) #1237-Microsoft Sat Sep 11 14:32:00 PST 2021", 1},
		{"5.15.153.1-microsoft-standard-WSL2", 2},
		{"Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 12.2.0, GNU ld (GNU Binutils) 2.40) #1 SMP Fri Mar 29 23:14:13 UTC 2024", 2},
		{"4.19.128-microsoft-standard", 2},
		{"6.6.36.3-microsoft-standard-WSL2+", 2},
		{"6.8.0-45-generic", 0},
		{"Linux version 6.1.0-26-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0) #1 SMP PREEMPT_DYNAMIC Debian 6.1.112-1 (2024-09-30)", 0},
		{"", 0},
	} {
		if got := WSLVersion(tc.release); got != tc.want {
			t.Errorf("WSLVersion(%q) = %d, want %d", tc.release, got, tc.want)
		}
	}
}
