package denials

import (
	"encoding/json"
	"net"
	"path/filepath"
	"strconv"

	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// statusDenied is the exit status of a call the sandbox denied
// (docs/design.md §6): a brokered call's result printed as text is
// known by it.
const statusDenied = 3

// Proxy is the entry of a connection the session's proxy refused: to
// host:port, for why (the proxy's own words). No escalation lifts it in
// this session: a host put to the approver was asked about already, and
// an internal address is never asked about.
func Proxy(host string, port int, why, setting string) Entry {
	return Entry{Layer: LayerProxy, Op: "connect", Host: net.JoinHostPort(host, strconv.Itoa(port)), Rule: why,
		Escalation: "no: the answer for a host holds for the session",
		WayForward: "a person adds the host to " + setting + " in a trusted config"}
}

// Brokered is the entry of an escalated call req that the supervisor's
// broker ran and that was refused: read from the call's result (stdout,
// the JSON of a failure, as dsh-fs printed it outside the session), or,
// for a result printed as text (--output text), from the request and its
// exit status. Only a denial (FS_SANDBOX_DENIED) makes one. approval is
// the trusted approval that decided.
func Brokered(req wire.Request, status int, stdout []byte, approval string) (Entry, bool) {
	e, ok := brokeredResult(req.Op, stdout, approval)
	if ok || status != statusDenied || json.Valid(stdout) {
		return e, ok
	}
	path := ""
	switch {
	case req.Write != nil:
		path = req.Write.Path
	case req.Edit != nil:
		path = req.Edit.Path
	}
	if path != "" && !filepath.IsAbs(path) {
		path = filepath.Join(req.Dir, path)
	}
	return Entry{Layer: LayerBroker, Op: req.Op, Path: path, Rule: "refused (the call's result says why)", Escalation: "no"}, true
}

// brokeredResult is Brokered's entry read from a failure's JSON.
func brokeredResult(op string, stdout []byte, approval string) (Entry, bool) {
	var r struct {
		OK       bool   `json:"ok"`
		Path     string `json:"path"`
		Resolved string `json:"resolved"`
		Error    struct {
			Code    string `json:"code"`
			Reason  string `json:"reason"`
			Matched string `json:"matched"`
			Hint    string `json:"hint"`
		} `json:"error"`
	}
	if json.Unmarshal(stdout, &r) != nil || r.OK || r.Error.Code != "FS_SANDBOX_DENIED" {
		return Entry{}, false
	}
	path := r.Resolved
	if path == "" {
		path = r.Path
	}
	rule := r.Error.Reason
	if r.Error.Matched != "" {
		rule += " (" + r.Error.Matched + ")"
	}
	e := Entry{Layer: LayerBroker, Op: op, Path: path, Rule: rule, Escalation: "no", WayForward: r.Error.Hint}
	if r.Error.Reason == "escalation not approved" && approval != "never" {
		e.Escalation = "asking again puts it to the approver (" + approval + ") again"
	}
	return e, true
}
