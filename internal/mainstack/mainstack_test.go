package mainstack

import (
	"fmt"
	"os"
	"testing"
	"unsafe"
)

// depth calls itself n times, each frame holding 256 bytes (about 300
// with the call's own): n = 64 reaches about 20 KiB of stack.
//
//go:noinline
func depth(n int) byte {
	var frame [256]byte
	frame[n%len(frame)] = byte(n)
	if n == 0 {
		return frame[0]
	}
	return depth(n-1) + frame[n%len(frame)]
}

// stackMoves says whether 20 KiB of calls from here moved the calling
// goroutine's stack: a growth copies it, so a local's address changes.
//
//go:noinline
func stackMoves() bool {
	var here byte
	before := uintptr(unsafe.Pointer(&here))
	depth(64)
	return uintptr(unsafe.Pointer(&here)) != before
}

// mainMoved is stackMoves on the main goroutine, which runs TestMain
// after every package's initialization.
var mainMoved bool

func TestMain(m *testing.M) {
	mainMoved = stackMoves()
	os.Exit(m.Run())
}

// TestMainGoroutineGrownOnce: the main goroutine holds 20 KiB of calls
// without its stack moving; a new goroutine's stack, started at 2 KiB,
// moves for the same calls (the probe sees a growth).
func TestMainGoroutineGrownOnce(t *testing.T) {
	if mainMoved {
		t.Error("the main goroutine's stack moved for 20 KiB of calls: not grown at its start")
	}
	moved := make(chan bool)
	go func() { moved <- stackMoves() }()
	if !<-moved {
		t.Error("a new goroutine's stack did not move for 20 KiB of calls: the probe sees no growth")
	}
}

// BenchmarkGoroutineDepth is a goroutine that reaches 20 KiB of calls,
// its stack grown by doubling from 2 KiB, or grown once first.
func BenchmarkGoroutineDepth(b *testing.B) {
	for _, grown := range []bool{false, true} {
		b.Run(fmt.Sprintf("grown-first=%t", grown), func(b *testing.B) {
			done := make(chan byte)
			for b.Loop() {
				go func() {
					if grown {
						grow(false)
					}
					done <- depth(64)
				}()
				<-done
			}
		})
	}
}
