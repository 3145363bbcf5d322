//go:build unix

package tty

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestStderrRelay: what is written to the relay reaches exec's pipe with
// the added line after a refusal; the relay ends when the writers close;
// a file is not relayed.
func TestStderrRelay(t *testing.T) {
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	r, err := OpenStderr(outW)
	if err != nil || r == nil {
		t.Fatalf("OpenStderr of a pipe: %v, %v", r, err)
	}
	outW.Close()
	r.Scanner.Explain = func(x Refusal) []byte { return []byte("[sandbox: " + x.Path + "]") }
	w := r.Writer()
	cmdEnd, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(w.Fd())), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	io.WriteString(cmdEnd, "a\nbash: x: Read-only file system\nb\n")
	cmdEnd.Close()
	r.Close()
	got, _ := io.ReadAll(outR)
	if want := "a\nbash: x: Read-only file system\n[sandbox: x]\nb\n"; string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	f, _ := os.CreateTemp(t.TempDir(), "f")
	if r, err := OpenStderr(f); r != nil || err != nil {
		t.Errorf("a file is relayed: %v %v", r, err)
	}
}

// TestStderrRelayBrokenPipe: once exec's reader is gone, the writer's
// next writes fail with EPIPE, as they would without the relay.
func TestStderrRelayBrokenPipe(t *testing.T) {
	outR, outW, _ := os.Pipe()
	r, err := OpenStderr(outW)
	if err != nil || r == nil {
		t.Fatal(err)
	}
	outW.Close()
	outR.Close()
	cmdEnd, err := os.OpenFile("/proc/self/fd/"+strconv.Itoa(int(r.Writer().Fd())), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cmdEnd.Close()
	r.Start()
	var werr error
	for i := 0; i < 1000 && werr == nil; i++ {
		_, werr = cmdEnd.Write([]byte(strings.Repeat("x", 1024) + "\n"))
	}
	if !errors.Is(werr, syscall.EPIPE) {
		t.Errorf("the writer's error %v, want EPIPE", werr)
	}
	r.Close()
}
