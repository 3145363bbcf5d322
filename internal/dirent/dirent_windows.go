package dirent

import (
	"encoding/binary"
	"unicode/utf16"

	"golang.org/x/sys/windows"
)

// Read reads entries of the folder open as the handle fd
// (GetFileInformationByHandleEx's FileIdBothDirectoryInfo, in a buffer
// half as large as buf) and writes them into buf as Linux's records
// (linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name), which the
// callers read; 0 at the folder's end. A reparse point is DT_LNK, a
// folder DT_DIR, anything else DT_REG. Half of buf is enough room: a
// record here is at most 1.3 times as long as Windows' of the same name.
func Read(fd int, buf []byte) (int, error) {
	win := make([]byte, len(buf)/2)
	err := windows.GetFileInformationByHandleEx(windows.Handle(uintptr(fd)), windows.FileIdBothDirectoryInfo, &win[0], uint32(len(win)))
	if err == windows.ERROR_NO_MORE_FILES {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for off := 0; ; {
		rec := win[off:]
		if len(rec) < idBothNameOff {
			return n, nil
		}
		attrs := binary.LittleEndian.Uint32(rec[56:60])
		nameLen := int(binary.LittleEndian.Uint32(rec[60:64]))
		if idBothNameOff+nameLen > len(rec) {
			return n, nil
		}
		u := make([]uint16, nameLen/2)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(rec[idBothNameOff+2*i:])
		}
		name := string(utf16.Decode(u))
		reclen := (NameOff + len(name) + 1 + 7) &^ 7
		if n+reclen > len(buf) {
			return n, nil // cannot happen with half of buf: see above
		}
		out := buf[n : n+reclen]
		clear(out)
		copy(out[0:8], rec[96:104]) // d_ino: the file ID
		binary.NativeEndian.PutUint16(out[16:18], uint16(reclen))
		out[TypeOff] = typeOf(attrs)
		copy(out[NameOff:], name)
		n += reclen
		next := int(binary.LittleEndian.Uint32(rec[0:4]))
		if next == 0 {
			return n, nil
		}
		off += next
	}
}

// idBothNameOff is the offset of FILE_ID_BOTH_DIR_INFO's FileName, after
// its times, sizes, attributes, lengths, short name and FileId (at 96).
const idBothNameOff = 104

// typeOf is the d_type of an entry with the file attributes attrs.
func typeOf(attrs uint32) uint8 {
	switch {
	case attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		return 10 // DT_LNK
	case attrs&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		return 4 // DT_DIR
	}
	return 8 // DT_REG
}

// The offsets of a record's type and name, Linux's.
const (
	TypeOff = 18
	NameOff = 19
)
