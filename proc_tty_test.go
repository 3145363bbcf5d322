package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the master, which plays the
// person, and the path of the slave, which becomes the child's terminal.
func openPTY(t *testing.T) (*os.File, string) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("cannot unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("cannot name the pseudo-terminal: %v", err)
	}
	return master, "/dev/pts/" + strconv.Itoa(n)
}

// TestEscalateTTY runs a denied write with --escalate under a real
// controlling terminal (approval: tty, the default): the person answers
// the prompt, "y" grants this one call and anything else refuses it.
func TestEscalateTTY(t *testing.T) {
	for _, tc := range []struct {
		answer    string
		wantCode  int
		escalated bool
	}{
		{"y\n", 0, true},
		{"n\n", 3, false},
		{"\n", 3, false},
	} {
		t.Run(strings.TrimSpace("answer "+tc.answer), func(t *testing.T) {
			bin := procBin(t)
			dir := t.TempDir()
			ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
			writeTree(t, dir, map[string]string{"ws/.keep": "", "outside/.keep": ""})
			master, slavePath := openPTY(t)
			slave, err := os.OpenFile(slavePath, os.O_RDWR, 0)
			if err != nil {
				t.Skipf("cannot open %s: %v", slavePath, err)
			}
			defer slave.Close()

			c := procCmd(bin, procEnv(t, ws), ws, "write", "../outside/x.txt", "--content", "approved\n", "--escalate", "danger-full-access")
			var stdout bytes.Buffer
			c.Stdin, c.Stdout, c.Stderr = slave, &stdout, &stdout
			// A new session whose controlling terminal is the slave: the
			// child's /dev/tty is our pseudo-terminal.
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}

			var mu sync.Mutex
			var screen bytes.Buffer
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := master.Read(buf)
					mu.Lock()
					screen.Write(buf[:n])
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			deadline := time.Now().Add(procTimeout)
			for {
				mu.Lock()
				asked := strings.Contains(screen.String(), "[y/N]")
				mu.Unlock()
				if asked {
					break
				}
				if time.Now().After(deadline) {
					c.Process.Kill()
					t.Fatalf("no prompt on the terminal; it shows %q", screen.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			mu.Lock()
			prompt := screen.String()
			mu.Unlock()
			if !strings.Contains(prompt, "write ../outside/x.txt") || !strings.Contains(prompt, "danger-full-access") {
				t.Errorf("the prompt does not say what it asks: %q", prompt)
			}
			master.Write([]byte(tc.answer))
			err = c.Wait()
			code := 0
			if err != nil {
				code = c.ProcessState.ExitCode()
			}
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d: %s", code, tc.wantCode, stdout.String())
			}
			_, statErr := os.Stat(filepath.Join(outside, "x.txt"))
			if written := statErr == nil; written != tc.escalated {
				t.Errorf("outside/x.txt written = %v, want %v", written, tc.escalated)
			}
			if got := strings.Contains(stdout.String(), `"escalated":true`); got != tc.escalated {
				t.Errorf("result %s: escalated = %v, want %v", stdout.String(), got, tc.escalated)
			}
			if !tc.escalated && !strings.Contains(stdout.String(), "not approved at the terminal") {
				t.Errorf("a refusal should say so: %s", stdout.String())
			}
		})
	}
}

// TestPrettyOnTerminal: on a terminal the result is indented for a person;
// anywhere else it is one line (every other test reads it from a pipe).
func TestPrettyOnTerminal(t *testing.T) {
	bin := procBin(t)
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{"f.txt": "x\n"})
	master, slavePath := openPTY(t)
	slave, err := os.OpenFile(slavePath, os.O_RDWR, 0)
	if err != nil {
		t.Skipf("cannot open %s: %v", slavePath, err)
	}
	defer slave.Close()
	c := procCmd(bin, procEnv(t, ws), ws, "stat", "f.txt")
	c.Stdout = slave
	if err := c.Run(); err != nil {
		t.Fatalf("stat on a terminal: %v", err)
	}
	slave.Close()
	var screen bytes.Buffer
	buf := make([]byte, 4096)
	for !strings.Contains(screen.String(), "}") {
		master.SetReadDeadline(time.Now().Add(procTimeout))
		n, err := master.Read(buf)
		screen.Write(buf[:n])
		if err != nil {
			break
		}
	}
	out := strings.ReplaceAll(screen.String(), "\r\n", "\n")
	if !strings.HasPrefix(out, "{\n  \"ok\": true,\n  \"op\": \"stat\",") {
		t.Errorf("on a terminal the result is not indented: %q", out)
	}
}
