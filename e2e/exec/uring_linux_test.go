package exec

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// uringProbe is the test-only program `uring-probe`: it makes an
// io_uring (io_uring_setup) and prints "io_uring made", or "io_uring
// refused: ERR" and exits 1.
func uringProbe() {
	var params [120]byte // struct io_uring_params, zeroed
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
	if e != 0 {
		fmt.Println("io_uring refused:", e)
		os.Exit(1)
	}
	unix.Close(int(fd))
	fmt.Println("io_uring made")
}
