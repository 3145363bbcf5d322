package repo

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The module's path, as go list names its packages.
const modulePath = "github.com/dshfs/dsh-fs"

// leanFrontEnds are the packages that serve a front end but the CLI, by
// folder: none may link cobra or lean on the CLI (issue 27). A folder
// that does not exist yet is skipped, so a package planned here is
// checked from the commit that adds it.
var leanFrontEnds = []string{
	"internal/mcpserver",
	"internal/session/supervisor",
}

// leanForbidden are what none of leanFrontEnds may depend on, directly
// or through another package.
var leanForbidden = []string{
	"github.com/spf13/cobra",
	modulePath + "/internal/cli",
}

// goListDeps is every package pkg (a folder) depends on, itself included.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to list what a package depends on")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestFrontEndsLeanOnNoneOther (issue 27): go list -deps of each package
// of leanFrontEnds holds neither cobra nor internal/cli. The control is
// dsh-fs-mcp's main, which links both: were the listing empty or the
// names wrong, the first half could not fail.
func TestFrontEndsLeanOnNoneOther(t *testing.T) {
	for _, folder := range leanFrontEnds {
		dir := filepath.Join(harness.RepoRoot, filepath.FromSlash(folder))
		if _, err := os.Stat(dir); os.IsNotExist(err) {
			t.Logf("%s: no such folder yet, not checked", folder)
			continue
		}
		deps := goListDeps(t, "./"+filepath.ToSlash(dir))
		if !slices.Contains(deps, modulePath+"/"+folder) {
			t.Fatalf("go list -deps %s does not list the package itself: %v", folder, deps)
		}
		for _, bad := range leanForbidden {
			if slices.Contains(deps, bad) {
				t.Errorf("%s depends on %s: a front end leans on no other; move what it needs into a package of its own (ARCHITECTURE.md, Allowed imports)", folder, bad)
			}
		}
	}
	main := goListDeps(t, "./"+filepath.ToSlash(filepath.Join(harness.RepoRoot, "cmd", "dsh-fs-mcp")))
	for _, want := range leanForbidden {
		if !slices.Contains(main, want) {
			t.Errorf("control: cmd/dsh-fs-mcp does not depend on %s", want)
		}
	}
}

// binaryForbidden are what the dsh-fs binary must not link, and why.
var binaryForbidden = []string{"net/http", "crypto/tls"}

// TestBinaryLinksNoHTTP (issue 38): go list -deps of the module's root,
// the dsh-fs binary, names neither net/http nor crypto/tls. Every dsh-fs
// process, the supervisor and exec's re-executed child, pays at its
// start for the initialization and page faults of everything linked,
// and net/http brings TLS, x509, compression and HTTP/2 along; the
// session's proxy reads its few HTTP heads itself (internal/netproxy).
// The control is dsh-fs-mcp's main, which links net/http through the
// MCP SDK: were the listing empty or the names wrong, the check could
// not fail.
func TestBinaryLinksNoHTTP(t *testing.T) {
	deps := goListDeps(t, harness.RepoRoot)
	if !slices.Contains(deps, modulePath+"/internal/netproxy") {
		t.Fatalf("go list -deps of the module root does not list internal/netproxy: %v", deps)
	}
	for _, bad := range binaryForbidden {
		if slices.Contains(deps, bad) {
			t.Errorf("the dsh-fs binary links %s: every process start pays for what is linked (issue 38); read the few HTTP heads by hand, as internal/netproxy does, or keep the package out of what main links", bad)
		}
	}
	mcp := goListDeps(t, "./"+filepath.ToSlash(filepath.Join(harness.RepoRoot, "cmd", "dsh-fs-mcp")))
	for _, want := range binaryForbidden {
		if !slices.Contains(mcp, want) {
			t.Errorf("control: cmd/dsh-fs-mcp does not depend on %s", want)
		}
	}
}

// The policy's vocabulary (internal/policy) is words only: no package of
// the module but internal/fserr under it, nothing of the kernel's
// mechanisms, and none of its own code able to make a system call or
// open a file. syscall itself is under every package that uses fmt
// (fmt imports os), and under fserr, which names errno values; so the
// check on syscall is on what the package imports itself.
var (
	policyFolder         = "internal/policy"
	policyDepsAllowed    = []string{modulePath + "/internal/policy", modulePath + "/internal/fserr"}
	policyDepsForbidden  = []string{"golang.org/x/sys/unix", modulePath + "/internal/sandbox", modulePath + "/internal/kernel"}
	policyImportsBlocked = []string{"syscall", "golang.org/x/sys/unix", "os", "os/exec", "unsafe"}
)

// goListImports is what pkg (a folder) imports itself.
func goListImports(t *testing.T, pkg string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to list what a package imports")
	}
	out, err := exec.Command(goBin, "list", "-f", `{{join .Imports " "}}`, pkg).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

// TestPolicyIsWordsOnly: go list -deps ./internal/policy holds neither
// golang.org/x/sys/unix, internal/sandbox, internal/kernel, nor any
// package of the module but fserr, and the package itself imports
// neither syscall, x/sys/unix, os, os/exec nor unsafe. The control is
// internal/sandbox, which holds what is forbidden here: were the listing
// empty or the names wrong, the check could not fail.
func TestPolicyIsWordsOnly(t *testing.T) {
	pkg := "./" + filepath.ToSlash(filepath.Join(harness.RepoRoot, filepath.FromSlash(policyFolder)))
	deps := goListDeps(t, pkg)
	if !slices.Contains(deps, modulePath+"/"+policyFolder) {
		t.Fatalf("go list -deps %s does not list the package itself: %v", policyFolder, deps)
	}
	for _, d := range deps {
		if slices.Contains(policyDepsForbidden, d) || strings.HasPrefix(d, modulePath+"/") && !slices.Contains(policyDepsAllowed, d) {
			t.Errorf("%s depends on %s: the policy's vocabulary is words only; what needs the mechanism stays in internal/sandbox (ARCHITECTURE.md, Allowed imports)", policyFolder, d)
		}
	}
	for _, im := range goListImports(t, pkg) {
		if slices.Contains(policyImportsBlocked, im) {
			t.Errorf("%s imports %s: the policy's vocabulary makes no system call and opens no file", policyFolder, im)
		}
	}
	sandbox := "./" + filepath.ToSlash(filepath.Join(harness.RepoRoot, "internal", "sandbox"))
	if d := goListDeps(t, sandbox); !slices.Contains(d, "golang.org/x/sys/unix") || !slices.Contains(d, modulePath+"/internal/kernel") {
		t.Errorf("control: internal/sandbox does not depend on golang.org/x/sys/unix and internal/kernel")
	}
	if im := goListImports(t, sandbox); !slices.Contains(im, "os") || !slices.Contains(im, "golang.org/x/sys/unix") {
		t.Errorf("control: internal/sandbox does not import os and golang.org/x/sys/unix")
	}
}

// policyBlind are the packages that know no policy: those that apply a
// session's plan, so that every platform's enforcer reads the same plain
// plan (docs/design.md §10), and the host's mechanisms the supervisor
// uses (the kept answers, the toolchains' caches). childForbidden is
// what none of them may depend on, directly or through another package:
// the policy's vocabulary, the fence that holds it today
// (internal/sandbox), the host's planner of the session's view of the
// file system (internal/session/layout) and the settings.
var (
	policyBlind = []string{"internal/session/child", "internal/session/plan", "internal/session/rawinit",
		"internal/session/kept", "internal/session/toolchains"}
	childForbidden = []string{
		modulePath + "/internal/sandbox",
		modulePath + "/internal/session/layout",
		modulePath + "/internal/policy",
		modulePath + "/internal/config",
	}
)

// TestChildKnowsNoPolicy: go list -deps of the session's applier (and of
// its plan) holds none of childForbidden. The control is the supervisor
// (internal/session/supervisor), which computes the plan from the policy: were the
// listing empty or the names wrong, the first half could not fail.
func TestChildKnowsNoPolicy(t *testing.T) {
	for _, folder := range policyBlind {
		deps := goListDeps(t, "./"+filepath.ToSlash(filepath.Join(harness.RepoRoot, filepath.FromSlash(folder))))
		if !slices.Contains(deps, modulePath+"/"+folder) {
			t.Fatalf("go list -deps %s does not list the package itself: %v", folder, deps)
		}
		for _, bad := range childForbidden {
			if slices.Contains(deps, bad) {
				t.Errorf("%s depends on %s: the applier of a session's plan knows no policy; compute what it needs on the host into internal/session/plan (ARCHITECTURE.md, Allowed imports)", folder, bad)
			}
		}
	}
	host := goListDeps(t, "./"+filepath.ToSlash(filepath.Join(harness.RepoRoot, "internal", "session", "supervisor")))
	if !slices.Contains(host, modulePath+"/internal/sandbox") || !slices.Contains(host, modulePath+"/internal/config") {
		t.Errorf("control: internal/session/supervisor depends on neither internal/sandbox nor internal/config")
	}
}
