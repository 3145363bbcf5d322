package rawinit

import (
	"os"
	"strconv"
)

// mapUser writes the maps of the new user namespace of the process at
// pid: the caller's own uid and gid each mapped to itself, and setgroups
// denied first, as an unprivileged writer of gid_map must.
func mapUser(pid int) error {
	proc := "/proc/" + strconv.Itoa(pid) + "/"
	uid, gid := strconv.Itoa(os.Getuid()), strconv.Itoa(os.Getgid())
	for _, m := range [][2]string{{"uid_map", uid + " " + uid + " 1"}, {"setgroups", "deny"}, {"gid_map", gid + " " + gid + " 1"}} {
		if err := os.WriteFile(proc+m[0], []byte(m[1]), 0); err != nil {
			return err
		}
	}
	return nil
}
