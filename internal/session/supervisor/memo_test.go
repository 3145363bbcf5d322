package supervisor

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// TestWithMemory: the supervisor answers a session's memory requests
// itself, files content under the hash it computes, and hands every
// other request to the call runner; the MCP escalator's channel refuses
// them and runs nothing.
func TestWithMemory(t *testing.T) {
	ran := 0
	run := func(wire.Request) wire.Reply { ran++; return wire.Reply{Status: 7} }
	h := withMemory(run)
	content := []byte("one\ntwo\n")
	s := sha256.Sum256(content)
	sum := hex.EncodeToString(s[:])
	if rep := h(wire.Request{Op: wire.OpRemember, Memo: &wire.Memo{Content: content}}); rep.Status != 0 || rep.Refused != "" {
		t.Errorf("remember: %+v", rep)
	}
	if rep := h(wire.Request{Op: wire.OpRecall, Memo: &wire.Memo{SHA256: sum}}); string(rep.Content) != string(content) {
		t.Errorf("recall: %+v", rep)
	}
	if rep := h(wire.Request{Op: wire.OpRecall, Memo: &wire.Memo{SHA256: sum[:63] + "0"}}); rep.Content != nil {
		t.Errorf("recall of a hash never remembered: %+v", rep)
	}
	if rep := h(wire.Request{Op: wire.OpWrite}); rep.Status != 7 || ran != 1 {
		t.Errorf("a write was not handed on: %+v", rep)
	}

	ran = 0
	r := refuseMemory(run)
	for _, op := range []string{wire.OpRemember, wire.OpRecall} {
		if rep := r(wire.Request{Op: op, Memo: &wire.Memo{SHA256: sum}}); rep.Refused == "" || ran != 0 {
			t.Errorf("%s on the escalator's channel: %+v (ran %d)", op, rep, ran)
		}
	}
	if rep := r(wire.Request{Op: wire.OpEdit}); rep.Status != 7 || ran != 1 {
		t.Errorf("an edit was not handed on: %+v", rep)
	}
}
