//go:build unix

package supervisor

import (
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/approval"
	"github.com/dshfs/dsh-fs/internal/audit"
	"github.com/dshfs/dsh-fs/internal/denials"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/netproxy"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// newProxy is the session's proxy, whose refusals are lines of the
// session's log: exec's standard error, as the git guard's report
// (networkDecided). A host no entry allows is reached when a trusted
// network_allow_commands grant covers the program asking (proxyGrants),
// else put to the approver, where the trusted network_approval is
// command or supervisor, once for the session (approval.ApproveHost);
// otherwise nobody is asked. Allowed hosts are reached through the
// upstream proxy, where there is one (proxyUpstream).
func (s *supervisor) newProxy(l *launched) (*netproxy.Proxy, error) {
	p := s.settings.Policy
	proxy, err := netproxy.New(p.NetworkAllow, nil)
	if err != nil {
		return nil, err
	}
	proxy.OnDecision(s.networkDecided())
	up, err := s.proxyUpstream()
	if err != nil {
		return nil, err
	}
	proxy.SetUpstream(up)
	grants, err := s.proxyGrants()
	if err != nil {
		return nil, err
	}
	proxy.SetGrants(grants, func(c net.Conn) ([][]netproxy.FileID, error) {
		return sessionPeer(l)(c)
	})
	if p.NetworkApproval.Asks() {
		proxy.SetApprover(func(host string, port int) error {
			req := policy.EscalationRequest{Kind: policy.KindNetworkHost, Op: policy.OpNetwork, Path: net.JoinHostPort(host, strconv.Itoa(port)),
				From: p.Mode, To: p.Mode, Reason: "not in " + netproxy.Setting}
			err := approval.ApproveHost(p, req, func(req policy.EscalationRequest) error {
				return s.askTerminal(wire.Ask{Request: req})
			})
			s.audit.Write(audit.HostAnswer(host, port, err))
			return err
		})
	}
	return proxy, nil
}

// networkDecided is where the proxy's decisions go, each as it is
// taken: a refusal is a line of exec's log and an entry of the denial
// log; every decision is a line of the audit log, where there is one. It
// is the one place that hears them (netproxy.Decision).
func (s *supervisor) networkDecided() func(netproxy.Decision) {
	enc := json.NewEncoder(s.log())
	enc.SetEscapeHTML(false)
	var mu sync.Mutex
	return func(d netproxy.Decision) {
		if d.Verdict != netproxy.VerdictRefused {
			s.audit.Write(audit.Allowed(d.Host, d.Port, d.Addr, d.Rule, d.Command, d.Via))
			return
		}
		mu.Lock()
		defer mu.Unlock()
		enc.Encode(networkRefusal{Op: "exec", Network: networkRefused{Host: d.Host, Port: d.Port, Why: d.Rule, Setting: netproxy.Setting}})
		s.denials.Add(denials.Proxy(d.Host, d.Port, d.Rule, netproxy.Setting))
		s.audit.Write(audit.Refused(d.Host, d.Port, d.Rule))
	}
}

// proxyUpstream is the upstream proxy of the session's proxy: the
// trusted network_upstream_proxy, else the one exec's own environment
// names (HTTPS_PROXY, HTTP_PROXY, NO_PROXY): exec's, never the
// session's, as a nested exec makes no proxy. nil where there is none.
func (s *supervisor) proxyUpstream() (*netproxy.Upstream, error) {
	p := s.settings.Policy
	var up *netproxy.Upstream
	var err error
	from := "exec's HTTPS_PROXY or HTTP_PROXY"
	if p.NetworkUpstreamProxy != "" {
		from = "network_upstream_proxy"
		up, err = netproxy.ParseUpstream(p.NetworkUpstreamProxy, strings.Join(p.NetworkUpstreamNoProxy, ","))
	} else {
		up, err = netproxy.UpstreamFromEnv(s.opts.LookupEnv)
	}
	if err != nil {
		return nil, fserr.New(fserr.ConfigInvalid, "exec: network allowlist: "+from+": "+err.Error()+
			"\nhint: name an http:// proxy there, or unset it")
	}
	if f := p.NetworkUpstreamAuth; f != "" && up != nil {
		cred, err := upstreamCredentials(p, f)
		if err != nil {
			return nil, err
		}
		up.WithCredentials(cred)
	}
	return up, nil
}

// proxyGrants resolves network_allow_commands on the trusted side: each
// command on exec's own PATH, to the file it is, which must lie outside
// the session's writable roots (else the session could rewrite the
// granted program in place and keep its identity).
func (s *supervisor) proxyGrants() ([]netproxy.Grant, error) {
	list, err := policy.ParseCommandGrants(s.settings.Policy.NetworkAllowCommands)
	if err != nil {
		return nil, fserr.New(fserr.ConfigInvalid, "exec: "+netproxy.SettingCommands+": "+err.Error())
	}
	var out []netproxy.Grant
	for _, cg := range list {
		bad := func(why string) error {
			return fserr.New(fserr.ConfigInvalid, "exec: "+netproxy.SettingCommands+": "+cg.Command+": "+why+
				"\nhint: name a compiled program, installed where the session cannot write")
		}
		path, err := exec.LookPath(cg.Command)
		if err == nil {
			path, err = filepath.EvalSymlinks(path)
		}
		if err != nil {
			return nil, bad(err.Error())
		}
		for _, root := range s.rec.Roots {
			if sandbox.Beneath(root, path) {
				return nil, bad(path + " lies in the session's writable root " + root)
			}
		}
		g, err := netproxy.NewGrant(path, cg.Allow)
		if err != nil {
			return nil, bad(err.Error())
		}
		out = append(out, g)
	}
	return out, nil
}
