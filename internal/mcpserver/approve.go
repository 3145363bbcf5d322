package mcpserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/approval"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// Approval supervisor over MCP, without a dsh-fs exec session: there is
// no person at a supervisor's terminal, so the MCP client's user is asked
// (docs/design.md §7). The question is a multi-round-trip input request
// (SEP-2322): the tool call answers with an elicitation and a signed
// state; the client puts it to its user and calls again with the answer.
// (For a client on an earlier protocol the SDK asks it with
// elicitation/create and calls again itself.) On the second round the
// change, pinned to the content the user was shown, runs elsewhere, and
// the escalated call's own question is answered from that approval, once.

// approveKey names the one input request of an escalation.
const approveKey = "dsh-fs-approve"

// approvalState is what the first round hands the client to echo back:
// which call, to which mode, was shown against which content.
type approvalState struct {
	Call     string `json:"call"` // the digest of op, path, mode, arguments and input
	Previous string `json:"previous"`
	Exists   bool   `json:"exists"`
	// Pins are a patch's files that exist, by the names the patch gives
	// them, with the SHA-256 each had when it was shown.
	Pins map[string]string `json:"pins,omitempty"`
	// Paths are every path the call changes, as the user was shown
	// them: the escalated call is approved only if it names the same.
	Paths []policy.EscalationPath `json:"paths,omitempty"`
}

// clientApprovals signs the states, and holds the approvals the client's
// user gave until the escalated call asks for them.
type clientApprovals struct {
	key     []byte
	mu      sync.Mutex
	granted []string // op, resolved path and mode of each approved call
}

func newClientApprovals() *clientApprovals {
	key := make([]byte, 32)
	rand.Read(key)
	return &clientApprovals{key: key}
}

func (c *clientApprovals) mac(body []byte) string {
	h := hmac.New(sha256.New, c.key)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// sign makes the opaque state a client echoes: the state and its HMAC
// under a key of this process, so no client or model can make one.
func (c *clientApprovals) sign(s approvalState) string {
	body, _ := json.Marshal(s)
	return base64.RawURLEncoding.EncodeToString(body) + "." + c.mac(body)
}

func (c *clientApprovals) verify(token string) (approvalState, bool) {
	var s approvalState
	enc, mac, ok := strings.Cut(token, ".")
	body, err := base64.RawURLEncoding.DecodeString(enc)
	if !ok || err != nil || !hmac.Equal([]byte(mac), []byte(c.mac(body))) || json.Unmarshal(body, &s) != nil {
		return approvalState{}, false
	}
	return s, true
}

func grantKey(op, resolved string, to policy.Mode, paths []policy.EscalationPath) string {
	key := op + "\x00" + resolved + "\x00" + string(to)
	for _, p := range paths {
		key += "\x00" + p.Op + "\x00" + p.Resolved
	}
	return key
}

func (c *clientApprovals) grant(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.granted = append(c.granted, key)
}

// drop withdraws an approval the escalated call did not take (it failed
// before it asked): it was for that run alone.
func (c *clientApprovals) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.Index(c.granted, key); i >= 0 {
		c.granted = slices.Delete(c.granted, i, i+1)
	}
}

// take consumes the approval of req, if the user gave one.
func (c *clientApprovals) take(req policy.EscalationRequest) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(c.granted, grantKey(req.Op, req.Resolved, req.To, req.Paths))
	if i < 0 {
		return false
	}
	c.granted = slices.Delete(c.granted, i, i+1)
	return true
}

// callDigest binds an approval to the exact call: the resolved path, the
// mode and the whole typed request (operation, options and input). A
// second round with other content is not the call the user saw.
func callDigest(resolved string, to policy.Mode, r request.Request) string {
	h := sha256.New()
	h.Write([]byte(r.Op() + "\x00" + resolved + "\x00" + string(to) + "\x00"))
	body, _ := json.Marshal(r)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// asksClientUser reports whether an escalation is put to the MCP client's
// user: approval supervisor, and no dsh-fs exec supervisor above.
func (m *server) asksClientUser() bool {
	return m.settings.Policy.Approval == policy.ApprovalSupervisor && m.runner != nil && m.runner.Own()
}

// clientApproval is the multi-round-trip question for r: on the first
// round the input request to return; on the second the state the user
// approved, with the approval recorded for the escalated call to take.
// A refusal is the denial, reason escalation not approved.
func (m *server) clientApproval(req *mcp.CallToolRequest, x *request.Exec, t sandbox.Target, ee *policy.HandedOverError, r request.Request, reason string) (*approvalState, *mcp.CallToolResult, error) {
	op := r.Op()
	digest := callDigest(t.Path, ee.To, r)
	answer := req.Params.InputResponses[approveKey]
	if answer == nil || req.Params.RequestState == "" {
		ip := req.Session.InitializeParams()
		if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
			return nil, nil, refuseEscalation(ee, "approval supervisor: there is no dsh-fs exec supervisor here and the MCP client offers no elicitation to ask its user; a trusted config can set approval: command")
		}
		d, shown, err := preview(x, r)
		if err != nil {
			return nil, nil, err
		}
		shown.Call = digest
		question := approval.Question(policy.EscalationRequest{Kind: policy.KindFile, Op: op, Path: t.Given, Resolved: t.Path, From: x.Fence().Mode(), To: ee.To,
			Reason: ee.Denied.Reason, Matched: ee.Denied.Matched, Paths: shown.Paths, Diff: d, DiffText: d.Text,
			EscalationContext: policy.EscalationContext{Cwd: x.Fence().Policy().Cwd, ModelReason: reason}})
		return nil, &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{approveKey: &mcp.ElicitParams{Message: question, RequestedSchema: approveSchema}},
			RequestState:  m.approvals.sign(shown),
		}, nil
	}
	state, ok := m.approvals.verify(req.Params.RequestState)
	if !ok || state.Call != digest {
		return nil, nil, refuseEscalation(ee, "the approval sent back is not this call's")
	}
	if r, ok := answer.(*mcp.ElicitResult); !ok || r.Action != "accept" || r.Content["approve"] != true {
		return nil, nil, refuseEscalation(ee, "not approved by the MCP client's user")
	}
	m.approvals.grant(grantKey(op, t.Path, ee.To, state.Paths))
	return &state, nil, nil
}

// approveSchema is the form the client's user fills: one yes or no.
var approveSchema = map[string]any{"type": "object", "required": []string{"approve"},
	"properties": map[string]any{"approve": map[string]any{"type": "boolean", "title": "Allow this one call",
		"description": "yes allows exactly this change, once"}}}

// pinned is r changed to make only the change the user saw: a file that
// existed is replaced only while it has the content shown (IfMatch); one
// that did not is only created. A patch is pinned file by file: each that
// existed, to the content shown; the others exist for none of its
// additions already (a patch never replaces by adding).
func pinned(r request.Request, s *approvalState) request.Request {
	switch r := r.(type) {
	case request.Patch:
		pins := maps.Clone(r.IfMatch)
		if pins == nil {
			pins = map[string]string{}
		}
		maps.Copy(pins, s.Pins)
		r.IfMatch = pins
		return r
	case request.Write:
		r.Overwrite = false
		if s.Exists {
			r.IfMatch = s.Previous
		}
		return r
	case request.Edit:
		if s.Exists {
			r.IfMatch = s.Previous
		}
		return r
	}
	return r
}

// clientApproved answers the escalated call's question (approval
// supervisor, over the escalator's channel) from the approvals the
// client's user gave on a second round; nothing else approves.
func (m *server) clientApproved(a wire.Ask) error {
	if m.approvals.take(a.Request) {
		return nil
	}
	return refusal(a.Request, "not approved by the MCP client's user")
}
