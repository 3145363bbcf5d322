package netproxy

// The settings a decision names.
const (
	// SettingCommands grants hosts to named programs while they run.
	SettingCommands = "network_allow_commands"
	// SettingApproval says who approves a host no entry allows.
	SettingApproval = "network_approval"
)

// The verdicts of a Decision.
const (
	VerdictAllowed  = "allowed"
	VerdictApproved = "approved"
	VerdictRefused  = "refused"
)

// Decision is one verdict of the session's proxy on a connection: the
// one event the session's log and audit read (OnDecision), so what the
// proxy decides is told from one place.
type Decision struct {
	Host string `json:"host"`
	Port int    `json:"port"`
	// Verdict is allowed, approved (by the approver, now or before) or
	// refused.
	Verdict string `json:"verdict"`
	// Rule is the setting that allowed it (network_allow,
	// network_allow_commands, network_approval), or why it was refused.
	Rule string `json:"rule"`
	// Command is the granted program's path, under a command's grant.
	Command string `json:"command,omitempty"`
	// Addr is the address an allowed host was reached at, the one the
	// proxy checked.
	Addr string `json:"addr,omitempty"`
	// Via is how an allowed host was reached: "direct", or "upstream
	// HOST:PORT" (never the upstream's credentials).
	Via string `json:"via,omitempty"`
}

// OnDecision makes f be told of every decision, allowed or refused, as
// it is taken; f must not block for long: the connection waits on it.
func (p *Proxy) OnDecision(f func(Decision)) { p.decided = f }

func (p *Proxy) decide(d Decision) {
	if p.decided != nil {
		p.decided(d)
	}
}
