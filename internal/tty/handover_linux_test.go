package tty

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenTerminal: the terminal starts with the modes and size given,
// read back through its master, and its slave is the master's peer.
func TestOpenTerminal(t *testing.T) {
	if _, err := os.Stat("/dev/ptmx"); err != nil {
		t.Skipf("no /dev/ptmx here: %v", err)
	}
	var modes Modes
	modes.Termios.Cflag = unix.CS8 | unix.CREAD
	modes.Termios.Lflag = unix.ICANON
	modes.Size = unix.Winsize{Row: 33, Col: 111}
	master, slave, err := OpenTerminal(modes)
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()
	if _, err := slave.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	if n, err := master.Read(buf); err != nil || string(buf[:n]) != "x" {
		t.Errorf("the master read %q (%v), want what the slave wrote", buf[:n], err)
	}
	ws, err := unix.IoctlGetWinsize(int(master.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Row != 33 || ws.Col != 111 {
		t.Errorf("window size %+v (%v), want 33x111", ws, err)
	}
	tio, err := unix.IoctlGetTermios(int(master.Fd()), unix.TCGETS)
	if err != nil || tio.Lflag&unix.ECHO != 0 || tio.Lflag&unix.ICANON == 0 {
		t.Errorf("modes lflag %#x (%v), want ICANON without ECHO", tio.Lflag, err)
	}
}

// TestHandover: the master the child sends is the one the supervisor
// receives; a child that closes its end without sending one gives an
// error, not a file.
func TestHandover(t *testing.T) {
	sup, child, err := NewHandover()
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	sent, err := os.Open("/dev/null")
	if err != nil {
		t.Fatal(err)
	}
	var want unix.Stat_t
	unix.Fstat(int(sent.Fd()), &want)
	if err := Handover(child, sent); err != nil {
		t.Fatal(err)
	}
	got, err := ReceiveTerminal(sup)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	var st unix.Stat_t
	if unix.Fstat(int(got.Fd()), &st); st.Ino != want.Ino || st.Rdev != want.Rdev {
		t.Errorf("received %d/%d, want %d/%d", st.Ino, st.Rdev, want.Ino, want.Rdev)
	}

	sup2, child2, err := NewHandover()
	if err != nil {
		t.Fatal(err)
	}
	defer sup2.Close()
	child2.Close()
	if f, err := ReceiveTerminal(sup2); err == nil {
		f.Close()
		t.Error("a handover with nothing sent gave a terminal")
	}
}
