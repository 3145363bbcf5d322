package cli

import (
	"runtime/debug"
	"testing"
)

// TestCallGC: a call collects at callGCPercent, unless GOGC is set, which
// the runtime has already applied and the call leaves alone.
func TestCallGC(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	setCallGC(func(string) (string, bool) { return "", false })
	if got := debug.SetGCPercent(100); got != callGCPercent {
		t.Errorf("GOGC unset: the call collects at %d, want %d", got, callGCPercent)
	}
	setCallGC(func(k string) (string, bool) { return "50", k == "GOGC" })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC set: the call changed the target to %d", got)
	}
}
