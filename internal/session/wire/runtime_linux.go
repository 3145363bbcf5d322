package wire

import (
	"path/filepath"
	"strconv"
)

// rootRuntimeBase is RuntimeBase for root.
const rootRuntimeBase = "/run/dsh-fs"

// xdgNamesRuntime says $XDG_RUNTIME_DIR names the runtime folder here, so
// one that names another folder is refused (Dir).
const xdgNamesRuntime = true

// runtimeFolder is the private runtime folder of the user uid, which
// pam_systemd makes: /run/user/UID.
func runtimeFolder(uid int) string { return filepath.Join("/run/user", strconv.Itoa(uid)) }
