package supervisor

import (
	"github.com/dshfs/dsh-fs/internal/memo"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// withMemory answers the session's memory requests (wire.OpRemember,
// which wire.Serve hands it on the channel's reading goroutine and
// whose reply goes nowhere, and wire.OpRecall) from a store of the
// supervisor's own, bounded (memo.ItemMax, memo.TotalMax), at once, and
// hands every other request to run.
// The store files content under the hash it computes itself, so a
// session can only recall what it sent; it lives in the supervisor's
// memory, beyond the session's reach and that of every other session,
// and ends with the supervisor.
func withMemory(run func(wire.Request) wire.Reply) func(wire.Request) wire.Reply {
	m := memo.New(memo.ItemMax, memo.TotalMax)
	return func(req wire.Request) wire.Reply {
		switch req.Op {
		case wire.OpRemember:
			m.Remember(req.Memo.Content)
			return wire.Reply{}
		case wire.OpRecall:
			return wire.Reply{Content: m.Recall(req.Memo.SHA256)}
		}
		return run(req)
	}
}

// refuseMemory is run for a channel that keeps no memory (dsh-fs mcp's
// escalator, whose server remembers in its own process): a remember is
// dropped and a recall refused, never run as a call.
func refuseMemory(run func(wire.Request) wire.Reply) func(wire.Request) wire.Reply {
	return func(req wire.Request) wire.Reply {
		if req.Op == wire.OpRemember || req.Op == wire.OpRecall {
			return wire.Reply{Status: 2, Refused: "this channel keeps no memory of reads"}
		}
		return run(req)
	}
}
