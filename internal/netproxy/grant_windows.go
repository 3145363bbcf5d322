package netproxy

import (
	"os"

	"golang.org/x/sys/windows"
)

// fileID is the identity of the opened file f, and whether it is a
// regular file: on Windows its volume's serial number and its file
// index.
func fileID(f *os.File) (FileID, bool, error) {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return FileID{}, false, err
	}
	regular := info.FileAttributes&(windows.FILE_ATTRIBUTE_DIRECTORY|windows.FILE_ATTRIBUTE_REPARSE_POINT|windows.FILE_ATTRIBUTE_DEVICE) == 0
	return FileID{Dev: uint64(info.VolumeSerialNumber), Ino: uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow)}, regular, nil
}
