//go:build !unix

package toolchains

import (
	"fmt"
	"os"
	"os/exec"
)

// killGroupOnCancel leaves c's cancel as it is (the process is killed):
// there are no process groups here.
func killGroupOnCancel(*exec.Cmd) {}

// statIdentity is the identity of the file at real: its size and mtime.
func statIdentity(real string) (string, error) {
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("size=%d mtime=%d", fi.Size(), fi.ModTime().UnixNano()), nil
}
