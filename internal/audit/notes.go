package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// NotesEnv names the descriptor on which the call a supervisor runs for
// a brokered escalation tells the session's audit log of the questions
// it puts to its approver and their answers. Only the supervisor sets
// it, on the calls it starts; the environment of the session never
// reaches them.
const NotesEnv = "DSH_FS_AUDIT_FD"

// Notes is the policy.Approver's Noted of a brokered call whose
// supervisor handed it the descriptor NotesEnv names (read with
// lookupEnv), or nil where none did. The descriptor is closed on exec:
// the approver a call runs never holds it.
func Notes(lookupEnv func(string) (string, bool)) func(policy.EscalationRequest, policy.Approval, error, bool) {
	v, ok := lookupEnv(NotesEnv)
	fd, err := strconv.Atoi(v)
	if !ok || err != nil || fd < 3 {
		return nil
	}
	closeOnExec(fd)
	f := os.NewFile(uintptr(fd), "audit-notes")
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	return func(req policy.EscalationRequest, by policy.Approval, answer error, answered bool) {
		e := Asked(req, by)
		if answered {
			e = Answered(req, by, answer)
		}
		enc.Encode(e)
	}
}

// Relay appends to l the events a brokered call writes on r, one JSON
// object a line, until r ends. Only the escalation events pass, each
// decoded strictly; anything else ends the relay. A nil *Log drains r.
func (l *Log) Relay(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		var e Event
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if dec.Decode(&e) != nil || e.Escalation == nil || e.Start != nil || e.Call != nil || e.Network != nil || e.End != nil ||
			e.Event != EventEscalationAsked && e.Event != EventEscalationAnswered {
			io.Copy(io.Discard, r)
			return
		}
		l.Write(e)
	}
}

// Allowed is the network event of a connection the proxy made to addr
// for host:port.
func Allowed(host string, port int, addr, rule, command, via string) Event {
	return Event{Event: EventNetwork, Network: &Network{Verdict: NetworkAllowed, Host: host, Port: port, Addr: addr, Rule: rule, Command: command, Via: via}}
}

// Refused is the network event of a connection the proxy refused.
func Refused(host string, port int, why string) Event {
	return Event{Event: EventNetwork, Network: &Network{Verdict: NetworkRefused, Host: host, Port: port, Why: why}}
}

// HostAnswer is the network event of a host put to the approver, and
// its answer (nil: approved for the session).
func HostAnswer(host string, port int, answer error) Event {
	n := &Network{Verdict: NetworkApproved, Host: host, Port: port}
	if answer != nil {
		n.Verdict, n.Why = NetworkNotApproved, answer.Error()
	}
	return Event{Event: EventNetwork, Network: n}
}
