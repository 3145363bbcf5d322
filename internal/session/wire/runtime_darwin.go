package wire

import (
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
)

// rootRuntimeBase is RuntimeBase for root: /var/run is root's, as /run
// is on Linux.
const rootRuntimeBase = "/var/run/dsh-fs"

// xdgNamesRuntime is false: macOS has no $XDG_RUNTIME_DIR of its own.
const xdgNamesRuntime = false

// runtimeFolder is the private folder of the user uid that holds its
// records' folder: its ~/Library, which macOS makes 0700 and the user's,
// its home found from the uid in the user database (getpwuid), never
// from $HOME. Where the uid has no home, a folder that does not exist, so
// Dir refuses with what is missing.
func runtimeFolder(uid int) string {
	home := homeOf(uid)
	if home == "" {
		return filepath.Join("/var/empty/no-home-for-uid", strconv.Itoa(uid))
	}
	return filepath.Join(home, "Library")
}

// homeOf is the home folder of uid by the user database, once a process.
var homeOf = func() func(int) string {
	homes := sync.Map{}
	return func(uid int) string {
		if h, ok := homes.Load(uid); ok {
			return h.(string)
		}
		home := ""
		if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			home = u.HomeDir
		}
		homes.Store(uid, home)
		return home
	}
}()
