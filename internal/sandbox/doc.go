// Package sandbox decides whether dsh-fs may touch a path and holds the
// confined handles through which every mutation runs: the writable
// roots, canonicalization, containment, protected and read-denied paths,
// and the escalation's decision, for a policy named in internal/policy.
// It knows nothing of JSON or cobra.
//
// # Builds
//
// The walk and the handles are one code for every build, making their
// system calls through internal/fsys (x/sys/unix itself on Unix, the
// same calls over handles on Windows); what an OS does its own way is in
// files named for it, and Linux's accelerators are in one file the
// portable build leaves out:
//
//   - os_linux.go, os_darwin.go: the handle's open flags (O_PATH; or
//     O_SEARCH, O_SYMLINK and read-only), the read-back of an open
//     descriptor's path (the verified /proc; fcntl(F_GETPATH)), a link's
//     text through its handle (readlinkat(fd, ""); by the name read back,
//     checked after, handle_unix.go's linkByName), the rename that never
//     replaces (renameat2 RENAME_NOREPLACE; renameatx_np RENAME_EXCL),
//     getdents and its record, and Landlock (none on macOS).
//   - accel_linux.go (linux && !dshportable): openat2's one-call walk of
//     a path with no symlink, O_TMPFILE and its link through /proc, a
//     handle as one O_PATH open. Accelerated reports true.
//   - os_windows.go: fsys's handles (O_PATH: NtCreateFile beneath the
//     folder's handle, a reparse point opened itself), the read-back by
//     GetFinalPathNameByHandle, a reparse point's target through its
//     handle, the rename that never replaces (FileRenameInformationEx
//     without REPLACE_IF_EXISTS), and no Landlock.
//   - portable.go (darwin || windows || (linux && dshportable)): the component walk
//     alone, a named temp file (O_EXCL, removed by Discard on every error
//     path), a handle made as macOS makes one: a folder by its search
//     flags, anything else looked at, opened by what it is and checked
//     to be what was looked at. Accelerated reports false.
//
// So go test -tags dshportable runs on Linux the walk, handles and temp
// files macOS runs. What Linux has no other call for stays Linux's under
// the tag: the read-back through /proc (Linux has no F_GETPATH), a
// symlink's or a device's handle (O_PATH, where macOS opens with
// O_SYMLINK, or opens the device), and renameat2, which is macOS's
// renameatx_np under another name.
package sandbox
