package fsystest

import (
	"os"

	"golang.org/x/sys/windows"
)

// MakeJunction makes link, a new empty folder, a junction (a mount
// point reparse point) to the folder target, a Windows path (`C:\x`).
func MakeJunction(link, target string) error {
	if err := os.Mkdir(link, 0o755); err != nil {
		return err
	}
	u, err := windows.UTF16PtrFromString(link)
	if err != nil {
		return err
	}
	h, err := windows.CreateFile(u, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	sub := windows.StringToUTF16(`\??\` + target)
	sub = sub[:len(sub)-1]
	// REPARSE_DATA_BUFFER of a mount point: tag, length, reserved, then
	// the substitute name (offset 0) and an empty print name after it.
	n := 2 * len(sub)
	buf := make([]byte, 16+n+4)
	put16 := func(off int, v uint16) { buf[off], buf[off+1] = byte(v), byte(v>>8) }
	buf[0], buf[3] = 0x03, 0xA0 // IO_REPARSE_TAG_MOUNT_POINT
	put16(4, uint16(len(buf)-8))
	put16(10, uint16(n))   // SubstituteNameLength
	put16(12, uint16(n+2)) // PrintNameOffset
	for i, c := range sub {
		put16(16+2*i, c)
	}
	var ret uint32
	return windows.DeviceIoControl(h, windows.FSCTL_SET_REPARSE_POINT, &buf[0], uint32(len(buf)), nil, 0, &ret, nil)
}
