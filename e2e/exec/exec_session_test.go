//go:build unix

package exec

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// The TestExecSession* tests (issue 23) run dsh-fs exec as a harness
// would start an agent's day: a real bash moved into the workspace by
// --cwd, and a policy of the session's own named by exec --config, the
// harness's trusted base for that session alone.

// requireBash returns the path of bash, or skips: the cwd tests run the
// shell an agent gets.
func requireBash(t *testing.T) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	return bash
}

// sessionTemp is a fresh temp folder by its canonical path, as exec
// pins it.
func sessionTemp(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeRequirements writes the managed requirements, requirements.yaml in
// the DSH_FS_TEST_SYSTEM_DIR of env, with content.
func writeRequirements(t *testing.T, env []string, content string) {
	t.Helper()
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "DSH_FS_TEST_SYSTEM_DIR="); ok {
			harness.WriteTree(t, dir, map[string]string{"requirements.yaml": content})
			return
		}
	}
	t.Fatalf("no DSH_FS_TEST_SYSTEM_DIR in the environment %q", env)
}

// TestExecSessionCwd: exec --cwd DIR, started from another folder, runs
// CMD in DIR (canonical): bash's pwd is DIR, a relative dsh-fs write and
// a plain redirection land in DIR, and nothing lands where exec started.
// Before: pwd printed the folder exec was started from, the write was
// refused (outside the roots) and the redirection failed with
// "Read-only file system".
func TestExecSessionCwd(t *testing.T) {
	harness.RequireLandlock(t)
	bash := requireBash(t)
	t.Parallel()
	for _, tc := range []struct{ name, cwd string }{
		{"absolute", "$WS"},
		{"through a symlink", "$START/link"},
		{"relative to exec's folder", "../" + "$WSBASE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			parent := sessionTemp(t)
			ws, start := filepath.Join(parent, "ws"), filepath.Join(parent, "start")
			harness.WriteTree(t, ws, map[string]string{".keep": ""})
			harness.WriteTree(t, start, map[string]string{".keep": ""})
			if err := os.Symlink(ws, filepath.Join(start, "link")); err != nil {
				t.Fatal(err)
			}
			cwd := strings.NewReplacer("$WSBASE", filepath.Base(ws), "$WS", ws, "$START", start).Replace(tc.cwd)
			env := execEnv(t, start)
			script := `pwd; dsh-fs write rel.txt --content x >/dev/null; echo "write=$?"; echo x > rel2; echo "redirect=$?"`
			c := harness.Cmd(harness.Bin(t), env, start, "exec", "--cwd", cwd, "--tmp=false", "--", bash, "-c", script)
			code, _, out, errs := harness.Run(t, c, nil)
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if lines[0] != ws {
				t.Errorf("pwd printed %q, want the --cwd %s", lines[0], ws)
			}
			for _, want := range []string{"write=0", "redirect=0"} {
				if !strings.Contains(out, want) {
					t.Errorf("want %q in:\n%s\nstderr: %s", want, out, errs)
				}
			}
			wantContent(t, filepath.Join(ws, "rel.txt"), "x")
			wantContent(t, filepath.Join(ws, "rel2"), "x\n")
			wantAbsent(t, filepath.Join(start, "rel.txt"))
			wantAbsent(t, filepath.Join(start, "rel2"))
		})
	}
}

// TestExecSessionNestedCwd: a nested exec starts its CMD where its shell
// is, beneath the pinned root, or in its own --cwd beneath it; a --cwd
// outside the pinned root is a widening.
func TestExecSessionNestedCwd(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	ws := sessionTemp(t)
	harness.WriteTree(t, ws, map[string]string{"sub/.keep": "", "other/.keep": ""})
	env := execEnv(t, ws)
	script := `cd sub && dsh-fs exec -- pwd && cd .. && dsh-fs exec --cwd other -- pwd && dsh-fs exec --cwd .. -- pwd`
	code, stdout, stderr := execSh(t, env, ws, fenced(ws), script)
	wantDenied(t, code, stdout, stderr, "session cannot widen the policy", "--cwd ..")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) < 2 || lines[0] != filepath.Join(ws, "sub") || lines[1] != filepath.Join(ws, "other") {
		t.Errorf("nested sessions started in %q, want %s then %s", lines, filepath.Join(ws, "sub"), filepath.Join(ws, "other"))
	}
}

// TestExecSessionBadCwd: a --cwd that does not exist, or is not a
// folder, fails exec with FS_NOT_FOUND or FS_NOT_DIR, exit 1, naming
// it, and CMD never runs. Before: FS_INVALID_ARGUMENT, exit 2.
func TestExecSessionBadCwd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, cwd, code string }{
		{"missing", "nope", "FS_NOT_FOUND"},
		{"missing parent", "nope/deeper", "FS_NOT_FOUND"},
		{"a file", "file.txt", "FS_NOT_DIR"},
		{"a dangling symlink", "dangling", "FS_NOT_FOUND"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := sessionTemp(t)
			harness.WriteTree(t, dir, map[string]string{"file.txt": "f\n"})
			if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "dangling")); err != nil {
				t.Fatal(err)
			}
			cwd, mark := filepath.Join(dir, tc.cwd), filepath.Join(dir, "ran")
			env := execEnv(t, dir)
			c := harness.Cmd(harness.Bin(t), env, dir, "exec", "--cwd", cwd, "--tmp=false", "--", "sh", "-c", "touch "+mark)
			code, _, out, errs := harness.Run(t, c, nil)
			if code != 1 {
				t.Errorf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errs)
			}
			r := lastResult(t, out)
			if r.Error.Code != tc.code || !strings.Contains(r.Error.Message, cwd) || !strings.Contains(r.Error.Message, "--cwd") {
				t.Errorf("error %s %q, want %s naming --cwd %s", r.Error.Code, r.Error.Message, tc.code, cwd)
			}
			wantAbsent(t, mark)
		})
	}
}

// execConfigCase is a session whose exec --config file names the
// fake-approver, recording what it is asked in mark.
type execConfigCase struct {
	ws, out, mark, config string
	env                   []string
}

// newExecConfigCase readies a workspace, an outside folder, and a
// session file of the harness's (approval: command, the approver
// recording in mark and answering code) outside both, plus extra YAML.
func newExecConfigCase(t *testing.T, code int, extra string) execConfigCase {
	t.Helper()
	ws, out, files := sessionTemp(t), sessionTemp(t), sessionTemp(t)
	c := execConfigCase{ws: ws, out: out, mark: filepath.Join(files, "asked.json"), config: filepath.Join(files, "session.yaml")}
	c.env = execEnv(t, ws, "OUT="+out)
	harness.WriteTree(t, files, map[string]string{"session.yaml": approverConfig(t, c.mark, code) + extra})
	return c
}

// run runs script in a session of c, with flags after --config, and
// returns its exit status, stdout and stderr.
func (c execConfigCase) run(t *testing.T, script string, flags ...string) (int, string, string) {
	t.Helper()
	return c.runWithin(t, harness.Timeout, script, flags...)
}

// runWithin is run with the hang guard bound (execShWithin).
func (c execConfigCase) runWithin(t *testing.T, bound time.Duration, script string, flags ...string) (int, string, string) {
	t.Helper()
	return execShWithin(t, c.env, c.ws, append(append(fenced(c.ws), "--config", c.config), flags...), script, bound)
}

// TestExecSessionConfig: exec --config FILE is the trusted base of that
// session: its approval: command is the one an escalation inside asks,
// and the approved write lands. Before: exec refused the file as a
// session source, exit 3, "session cannot widen the policy (file …:
// approval)".
func TestExecSessionConfig(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	c := newExecConfigCase(t, 0, "")
	code, stdout, stderr := c.run(t, `dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if r := lastResult(t, stdout); !r.OK || !r.Escalated {
		t.Errorf("result %s: want ok and \"escalated\":true", stdout)
	}
	wantContent(t, filepath.Join(c.out, "x"), "hi")
	if req := harness.ReadFile(t, c.mark); !strings.Contains(req, filepath.Join(c.out, "x")) {
		t.Errorf("the session's approver was asked %s, want the write of %s", req, filepath.Join(c.out, "x"))
	}
}

// TestExecSessionConfigCapped: the managed requirements cap exec
// --config as they cap every trusted source: their approval wins, a
// mode above their max_mode is FS_CONFIG_INVALID (CMD never runs), and
// exec's own flags still come after the file.
func TestExecSessionConfigCapped(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	t.Run("managed approval wins", func(t *testing.T) {
		t.Parallel()
		c := newExecConfigCase(t, 0, "")
		writeRequirements(t, c.env, "approval: never\n")
		code, stdout, stderr := c.run(t, `dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`)
		wantDenied(t, code, stdout, stderr, "escalation not approved")
		wantAbsent(t, filepath.Join(c.out, "x"))
		wantAbsent(t, c.mark)
	})
	t.Run("mode above managed max_mode", func(t *testing.T) {
		t.Parallel()
		c := newExecConfigCase(t, 0, "mode: danger-full-access\n")
		writeRequirements(t, c.env, "max_mode: workspace-write\n")
		code, stdout, stderr := c.run(t, `touch "$OUT/ran"`)
		if r := lastResult(t, stdout); code != 2 || r.Error.Code != "FS_CONFIG_INVALID" || !strings.Contains(r.Error.Message, c.config) {
			t.Errorf("exit %d, want 2 and FS_CONFIG_INVALID naming %s\nstdout: %s\nstderr: %s", code, c.config, stdout, stderr)
		}
		wantAbsent(t, filepath.Join(c.out, "ran"))
	})
	t.Run("exec's flags over the file", func(t *testing.T) {
		t.Parallel()
		c := newExecConfigCase(t, 0, "mode: danger-full-access\n")
		code, stdout, stderr := c.run(t, `echo x > "$OUT/x"`, "--mode", "workspace-write")
		if code == 0 {
			t.Errorf("a write outside under --mode workspace-write succeeded\nstdout: %s\nstderr: %s", stdout, stderr)
		}
		wantAbsent(t, filepath.Join(c.out, "x"))
	})
}

// TestExecSessionConfigRefused: a file exec --config names is held to
// the rules of a trusted file: it must exist, be written by no one but
// root and its owner, and name absolute paths. Each refusal is
// FS_CONFIG_INVALID naming the file, exit 2, and CMD never runs.
func TestExecSessionConfigRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		want       string
	}{
		{name: "missing", want: "no such file"},
		{name: "writable by others", body: "mode: read-only\n", mode: 0o666, want: "not trusted"},
		{name: "a relative root", body: "writable_roots: [build]\n", mode: 0o644, want: "is relative"},
		{name: "an unknown key", body: "colour: red\n", mode: 0o644, want: "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws, files := sessionTemp(t), sessionTemp(t)
			config, mark := filepath.Join(files, "session.yaml"), filepath.Join(ws, "ran")
			if tc.body != "" {
				harness.WriteTree(t, files, map[string]string{"session.yaml": tc.body})
				if err := os.Chmod(config, tc.mode); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := execSh(t, execEnv(t, ws), ws, append(fenced(ws), "--config", config), "touch "+mark)
			r := lastResult(t, stdout)
			if code != 2 || r.Error.Code != "FS_CONFIG_INVALID" || !strings.Contains(r.Error.Message, config) || !strings.Contains(r.Error.Message, tc.want) {
				t.Errorf("exit %d %s %q, want 2 and FS_CONFIG_INVALID naming %s and saying %q\nstderr: %s", code, r.Error.Code, r.Error.Message, config, tc.want, stderr)
			}
			wantAbsent(t, mark)
		})
	}
}

// TestExecSessionConfigNarrowsInside: inside a session started with
// exec --config, the record pins the policy: a nested exec --config and
// a call's --config are session files again, which narrow and never
// widen, and the harness's file cannot be rewritten by the file tool.
func TestExecSessionConfigNarrowsInside(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	wide := func(t *testing.T, c execConfigCase, body string) string {
		t.Helper()
		p := filepath.Join(filepath.Dir(c.config), "wide.yaml")
		harness.WriteTree(t, filepath.Dir(p), map[string]string{"wide.yaml": body})
		return p
	}
	// Each widening source is refused whole: the write it would allow
	// never lands, and the session's approver is never asked.
	for _, tc := range []struct {
		name, body, key string
		script          func(w string) string
	}{
		{"nested exec --config widening", "mode: danger-full-access\n", "mode",
			func(w string) string { return `dsh-fs exec --config ` + w + ` -- sh -c 'echo x > "$OUT/x"'` }},
		{"nested exec --config approval", "approval: trust\n", "approval",
			func(w string) string {
				return `dsh-fs exec --config ` + w + ` -- dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`
			}},
		{"a call's --config approval", "approval: trust\n", "approval",
			func(w string) string {
				return `dsh-fs write "$OUT/x" --content hi --escalate danger-full-access --config ` + w
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newExecConfigCase(t, 0, "")
			w := wide(t, c, tc.body)
			code, stdout, stderr := c.run(t, tc.script(w))
			wantDenied(t, code, stdout, stderr, "session cannot widen the policy", "file "+w+": "+tc.key)
			wantAbsent(t, filepath.Join(c.out, "x"))
			wantAbsent(t, c.mark)
		})
	}
	t.Run("nested exec --config narrowing", func(t *testing.T) {
		t.Parallel()
		c := newExecConfigCase(t, 0, "")
		n := wide(t, c, "mode: read-only\n")
		code, stdout, stderr := c.run(t, `dsh-fs exec --config `+n+` -- sh -c 'echo x > in.txt'; echo "status $?"`)
		if code != 0 || strings.Contains(stdout, "status 0") {
			t.Errorf("a write in a read-only nested session: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		wantAbsent(t, filepath.Join(c.ws, "in.txt"))
	})
	t.Run("the harness's file in the workspace stays", func(t *testing.T) {
		t.Parallel()
		c := newExecConfigCase(t, 0, "")
		// The harness keeps the session's file in the workspace: the
		// session must not rewrite it for the next session.
		inside := filepath.Join(c.ws, "dsh-session.yaml")
		harness.WriteTree(t, c.ws, map[string]string{"dsh-session.yaml": harness.ReadFile(t, c.config)})
		code, stdout, stderr := execSh(t, c.env, c.ws, append(fenced(c.ws), "--config", inside),
			`dsh-fs write dsh-session.yaml --content 'approval: trust' --overwrite`)
		wantDenied(t, code, stdout, stderr, "protected path")
		wantContent(t, inside, harness.ReadFile(t, c.config))
	})
}

// TestExecSessionTwoConfigs: two sessions running at once, each started
// with its own exec --config naming its own approver, each escalate a
// write: each session's approver is asked for its own session's write
// alone, and each session's policy names its own approver. Before: exec
// refused both files ("session cannot widen the policy").
func TestExecSessionTwoConfigs(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	a, b := newExecConfigCase(t, 0, ""), newExecConfigCase(t, 0, "")
	// Each shell waits until the other session is up, so both
	// supervisors, records and approvers live at the same time.
	script := `touch "$WS/ready"
i=0; while [ ! -e "$OTHER/ready" ]; do sleep 0.05; i=$((i+1)); [ $i -gt 400 ] && exit 91; done
dsh-fs write "$OUT/x" --content "$NAME" --escalate danger-full-access || exit 92
dsh-fs policy`
	type result struct {
		code           int
		stdout, stderr string
	}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i, s := range []struct {
		c           execConfigCase
		name, other string
	}{{a, "A", b.ws}, {b, "B", a.ws}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.c.env = append(s.c.env, "WS="+s.c.ws, "OTHER="+s.other, "NAME="+s.name)
			// In turn: the wait for the other session's start (its
			// exec), the write and its approver, policy. A loaded
			// 2-core machine under -race took 6 s: one process's guard
			// for each.
			code, stdout, stderr := s.c.runWithin(t, 4*harness.Timeout, script)
			results[i] = result{code, stdout, stderr}
		}()
	}
	wg.Wait()
	for i, s := range []struct {
		c, other execConfigCase
		name     string
	}{{a, b, "A"}, {b, a, "B"}} {
		r := results[i]
		if r.code != 0 {
			t.Errorf("session %s: exit %d\nstdout: %s\nstderr: %s", s.name, r.code, r.stdout, r.stderr)
			continue
		}
		wantContent(t, filepath.Join(s.c.out, "x"), s.name)
		req := harness.ReadFile(t, s.c.mark)
		if !strings.Contains(req, filepath.Join(s.c.out, "x")) || strings.Contains(req, s.other.out) {
			t.Errorf("session %s's approver was asked %s, want its own write of %s alone", s.name, req, filepath.Join(s.c.out, "x"))
		}
		// The last line is the session's dsh-fs policy.
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		var pol struct {
			Settings []struct {
				Key   string `json:"key"`
				Value any    `json:"value"`
			} `json:"settings"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &pol); err != nil {
			t.Fatalf("session %s: dsh-fs policy printed %q: %v", s.name, lines[len(lines)-1], err)
		}
		found := false
		for _, st := range pol.Settings {
			if st.Key != "approval_command" {
				continue
			}
			found = true
			text, _ := json.Marshal(st.Value)
			if !bytes.Contains(text, []byte(strconv.Quote(s.c.mark))) || bytes.Contains(text, []byte(strconv.Quote(s.other.mark))) {
				t.Errorf("session %s's policy has approval_command %s, want its own approver's (%s)", s.name, text, s.c.mark)
			}
		}
		if !found {
			t.Errorf("session %s's policy names no approval_command: %s", s.name, lines[len(lines)-1])
		}
	}
}

// TestExecSessionConfigAgent: a session of the ordinary user dshfs-agent
// started with its own exec --config (a file of root's beside the
// workspace) asks that file's approver, which runs as the user, and the
// approved write lands; the shell starts in --cwd, not where exec was
// started.
func TestExecSessionConfigAgent(t *testing.T) {
	harness.RequireLandlock(t)
	uid := agentUser(t)
	bin, ws, system := unprivilegedSession(t, map[string]string{".keep": ""})
	dir := filepath.Dir(ws)
	approver := filepath.Join(dir, "bin", "fake-approver")
	if err := os.Link(bin, approver); err != nil {
		t.Fatal(err)
	}
	out, marks := filepath.Join(dir, "out"), filepath.Join(dir, "marks")
	harness.WriteTree(t, out, map[string]string{".keep": ""})
	harness.WriteTree(t, marks, map[string]string{".keep": ""})
	chownTree(t, out)
	chownTree(t, marks)
	mark := filepath.Join(marks, "asked.json")
	config := filepath.Join(dir, "session.yaml")
	harness.WriteTree(t, dir, map[string]string{"session.yaml": "approval: command\napproval_command: [" + strconv.Quote(approver) + ", " + strconv.Quote(mark) + ", \"0\"]\n"})
	c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--config", config, "--", "sh", "-c",
		`pwd; id -u; dsh-fs write "$OUT/x" --content hi --escalate danger-full-access`)
	c.Dir = dir
	c.Env = agentExecEnv(t, bin, system, "OUT="+out)
	asAgent(t, c)
	stdout, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("exec as %s: %v\n%s", agentUserName, err, stdout)
	}
	lines := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	if len(lines) < 3 || lines[0] != ws || lines[1] != strconv.Itoa(uid) {
		t.Errorf("want pwd %s and uid %d first, got:\n%s", ws, uid, stdout)
	}
	if r := lastResult(t, string(stdout)); !r.OK || !r.Escalated {
		t.Errorf("result %s: want ok and \"escalated\":true", stdout)
	}
	wantContent(t, filepath.Join(out, "x"), "hi")
	if req := harness.ReadFile(t, mark); !strings.Contains(req, filepath.Join(out, "x")) {
		t.Errorf("the session's approver was asked %s, want the write of %s", req, filepath.Join(out, "x"))
	}
}

// TestReadmeRecipeConfig: the session file of README's quickstart for
// harnesses, as written there, is one exec --config takes: its network,
// hosts and approver are the session's, as policy reports them inside.
func TestReadmeRecipeConfig(t *testing.T) {
	harness.RequireLandlock(t)
	t.Parallel()
	readme := harness.ReadFile(t, filepath.Join(harness.RepoRoot, "README.md"))
	_, after, ok := strings.Cut(readme, "cat > ~/.config/my-harness/proj-a.yaml <<'YAML'\n")
	yaml, _, ok2 := strings.Cut(after, "\nYAML\n")
	if !ok || !ok2 {
		t.Fatal("README.md has no session file (cat > ~/.config/my-harness/proj-a.yaml <<'YAML' … YAML)")
	}
	ws, files := sessionTemp(t), sessionTemp(t)
	config := filepath.Join(files, "proj-a.yaml")
	harness.WriteTree(t, files, map[string]string{"proj-a.yaml": yaml + "\n"})
	code, stdout, stderr := execSh(t, execEnv(t, ws), ws, append(fenced(ws), "--config", config), "dsh-fs policy --verbose")
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var p struct {
		Settings []struct {
			Key   string          `json:"key"`
			Value json.RawMessage `json:"value"`
		} `json:"settings"`
		Shell struct {
			Network string `json:"network"`
		} `json:"shell"`
	}
	if err := json.Unmarshal([]byte(stdout), &p); err != nil {
		t.Fatalf("policy: %v\n%s", err, stdout)
	}
	got := map[string]string{}
	for _, s := range p.Settings {
		got[s.Key] = string(s.Value)
	}
	if got["approval"] != `"command"` || !strings.HasPrefix(got["approval_command"], `["/bin/sh","-c",`) || got["network"] != `"allowlist"` || !strings.Contains(got["deny_read"], "**/.env") {
		t.Errorf("approval %s %s, network %s, deny_read %s: want the README's", got["approval"], got["approval_command"], got["network"], got["deny_read"])
	}
	for _, host := range []string{"proxy.golang.org", "sum.golang.org", "registry.npmjs.org"} {
		if !strings.Contains(p.Shell.Network, host) {
			t.Errorf("shell.network %q does not name %s", p.Shell.Network, host)
		}
	}
}
