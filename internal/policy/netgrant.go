package policy

import (
	"fmt"
	"net/url"
	"strings"
)

// ParseUpstreamProxy checks network_upstream_proxy: an http://HOST[:PORT]
// URL with no credentials, which a trusted file (readable inside the
// session) and policy would show; they come from a file deny_read hides
// (network_upstream_proxy_auth_file) or exec's own environment
// (HTTPS_PROXY's userinfo). "" is none. Its errors never quote the
// value.
func ParseUpstreamProxy(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	switch {
	case err != nil || u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("not a proxy URL (want http://HOST:PORT)")
	case u.User != nil:
		return nil, fmt.Errorf("credentials in the URL would be readable in the session (the trusted file, policy); give them in network_upstream_proxy_auth_file, or exec's own HTTPS_PROXY (want http://HOST:PORT)")
	case u.Scheme != "http":
		return nil, fmt.Errorf("only an http:// upstream is asked, with CONNECT whatever the client's scheme (want http://HOST:PORT)")
	case u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("a path or a query in the URL (want http://HOST:PORT)")
	}
	return u, nil
}

// ParseCommandGrants parses network_allow_commands: each entry
// "COMMAND=HOST", COMMAND a program's name (looked up on exec's own
// PATH) or absolute path, HOST a network_allow entry. It returns each
// command's hosts, in the order first named.
func ParseCommandGrants(list []string) ([]CommandGrant, error) {
	var out []CommandGrant
	for _, e := range list {
		cmd, host, ok := strings.Cut(e, "=")
		cmd = strings.TrimSpace(cmd)
		if !ok || cmd == "" || strings.ContainsAny(cmd, "\x00\n") || (strings.Contains(cmd, "/") && !strings.HasPrefix(cmd, "/")) {
			return nil, fmt.Errorf("%q is not COMMAND=HOST (COMMAND a program's name or absolute path)", e)
		}
		host = strings.TrimSpace(host)
		if _, err := ParseNetworkEntry(host); err != nil {
			return nil, err
		}
		i := 0
		for i < len(out) && out[i].Command != cmd {
			i++
		}
		if i == len(out) {
			out = append(out, CommandGrant{Command: cmd})
		}
		out[i].Allow = append(out[i].Allow, host)
	}
	return out, nil
}

// CommandGrant is one program's grant of network_allow_commands.
type CommandGrant struct {
	Command string
	Allow   []string
}
