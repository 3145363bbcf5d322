package bridge

import (
	"slices"
	"testing"
)

func TestEnv(t *testing.T) {
	env := Env([]string{"PATH=/bin", "http_proxy=http://corp:3128", "NO_PROXY=corp", "HOME=/h"}, 4242)
	for _, want := range []string{"PATH=/bin", "HOME=/h", "HTTP_PROXY=http://127.0.0.1:4242", "http_proxy=http://127.0.0.1:4242",
		"HTTPS_PROXY=http://127.0.0.1:4242", "https_proxy=http://127.0.0.1:4242", "ALL_PROXY=socks5h://127.0.0.1:4242",
		"all_proxy=socks5h://127.0.0.1:4242", "NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1"} {
		if !slices.Contains(env, want) {
			t.Errorf("env lacks %s: %q", want, env)
		}
	}
	if slices.Contains(env, "http_proxy=http://corp:3128") || slices.Contains(env, "NO_PROXY=corp") {
		t.Errorf("the caller's proxy kept: %q", env)
	}
}
