package wire

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// privateDir is a folder a record may live in: mode 0700, outside /tmp
// (which anyone may write, so nothing beneath it is trusted).
func privateDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: a private folder outside /tmp is made under /run")
	}
	dir, err := Dir("", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// sampleRecord is a record whose supervisor is this process, running.
func sampleRecord(roots ...string) *Record {
	start, _ := StartTime(os.Getpid())
	ns, _ := PidNamespace()
	return &Record{Values: map[string]any{"mode": "workspace-write"}, Roots: roots,
		Supervisor: os.Getpid(), SupervisorStart: start, SupervisorPidNS: ns}
}

// deadPid is the pid of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	return dead.Process.Pid
}

// writeIn writes r, as exec would, into a new folder of base named name.
func writeIn(t *testing.T, base, name string, r *Record) string {
	t.Helper()
	d := filepath.Join(base, name)
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	p, err := Write(d, r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A record exec wrote reads back; every way the session could have
// written one is refused with a reason, never read as a policy.
func TestReadTrustsOnlyWhatTheSessionCouldNotWrite(t *testing.T) {
	dir := privateDir(t)
	good, err := Write(dir, sampleRecord("/srv/ws"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(good); fi.Mode().Perm() != 0o400 {
		t.Fatalf("record mode %04o, want 0400", fi.Mode().Perm())
	}
	if r, err := Read(good); err != nil || r.Values["mode"] != "workspace-write" {
		t.Fatalf("Read(exec's own record) = %+v, %v", r, err)
	}

	data, _ := os.ReadFile(good)
	inRoot := func() string {
		// A record whose own roots hold it: the session wrote it.
		d := filepath.Join(dir, "ws")
		os.Mkdir(d, 0o700)
		sub, _ := Write(d, sampleRecord(d))
		return sub
	}
	writable := func() string {
		p := filepath.Join(dir, "writable.json")
		os.WriteFile(p, data, 0o600)
		return p
	}
	link := func() string {
		p := filepath.Join(dir, "link.json")
		os.Symlink(good, p)
		return p
	}
	underTmp := func() string {
		d := t.TempDir()
		p := filepath.Join(d, "session.json")
		os.WriteFile(p, data, 0o400)
		return p
	}
	notRecord := func() string {
		p := filepath.Join(dir, "other.json")
		os.WriteFile(p, []byte(`{"mode":"danger-full-access"}`), 0o400)
		return p
	}
	openFolder := func() string {
		d := filepath.Join(dir, "open")
		os.Mkdir(d, 0o777)
		os.Chmod(d, 0o777)
		p := filepath.Join(d, "session.json")
		os.WriteFile(p, data, 0o400)
		return p
	}
	// A private folder outside the runtime folder: the session, root,
	// could make one, and a record in it names no roots.
	outsideBase := func() string {
		d, err := os.MkdirTemp("/run", "dsh-fs-recordtest-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return writeIn(t, d, "session-x", sampleRecord())
	}
	// A folder of the runtime folder not named as exec names its own.
	notSession := func() string {
		return writeIn(t, filepath.Dir(dir), "forged-"+filepath.Base(dir), sampleRecord())
	}
	openSession := func() string {
		p := writeIn(t, filepath.Dir(dir), filepath.Base(dir)+"-open", sampleRecord())
		os.Chmod(filepath.Dir(p), 0o755)
		return p
	}
	gone := func() string {
		r := sampleRecord()
		r.Supervisor = deadPid(t)
		return writeIn(t, filepath.Dir(dir), filepath.Base(dir)+"-gone", r)
	}
	reused := func() string {
		r := sampleRecord()
		r.SupervisorStart--
		return writeIn(t, filepath.Dir(dir), filepath.Base(dir)+"-reused", r)
	}
	noSupervisor := func() string {
		d := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+"-nosup")
		os.Mkdir(d, 0o700)
		t.Cleanup(func() { os.RemoveAll(d) })
		p := RecordPath(d)
		os.WriteFile(p, []byte(`{"version":1,"values":{},"roots":[],"supervisor_pid":1}`), 0o400)
		return p
	}
	otherName := func() string {
		p := filepath.Join(dir, "other-name.json")
		os.WriteFile(p, data, 0o400)
		return p
	}
	for _, tc := range []struct {
		name string
		path func() string
		why  string
	}{
		{"in one of its roots", inRoot, "lies in the writable root"},
		{"in a private folder outside the runtime folder", outsideBase, "not in a session folder of exec's runtime folder /run/dsh-fs"},
		{"in a folder of the runtime folder not a session's", notSession, "not in a session folder"},
		{"in a session folder others may read", openSession, "not private (mode 0700)"},
		{"naming a supervisor that is gone", gone, "its supervisor (pid"},
		{"naming a pid another process came to hold", reused, "is gone"},
		{"naming no supervisor's pid namespace", noSupervisor, "names no supervisor"},
		{"not named as exec names its record", otherName, "not in a session folder"},
		{"writable", writable, "may be written"},
		{"a symlink", link, "a symlink"},
		{"under /tmp", underTmp, "may be written by others"},
		{"not a record", notRecord, "not a dsh-fs exec session record"},
		{"in a folder others may write", openFolder, "may be written by others"},
		{"missing", func() string { return filepath.Join(dir, "none.json") }, "no such file"},
		{"relative", func() string { return "session.json" }, "not an absolute path"},
		{"a folder", func() string { return dir }, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.path()
			r, err := Read(p)
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("Read(%s) = %+v, %v; want a refusal", p, r, err)
			}
			if !strings.Contains(re.Why, tc.why) {
				t.Errorf("refusal %q, want it to say %q", re.Why, tc.why)
			}
		})
	}
}

// Dir refuses a runtime folder inside a writable root: the session could
// rewrite the record there.
func TestDirOutsideRoots(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the runtime folder is /run/dsh-fs")
	}
	if _, err := Dir("", []string{"/run"}); err == nil || !strings.Contains(err.Error(), "writable root /run") {
		t.Fatalf("Dir with /run writable = %v, want a refusal", err)
	}
	d, err := Dir("", []string{"/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(d)
	if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("runtime folder %s: %v, %v; want mode 0700", d, fi, err)
	}
}

// A record whose supervisor is gone (killed before it could remove it)
// is removed when the next session starts, also when another process
// has come to hold its pid; a live one is kept.
func TestDirRemovesStaleRecords(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the runtime folder is /run/dsh-fs")
	}
	stale := privateDir(t)
	r := sampleRecord()
	r.Supervisor = deadPid(t)
	if _, err := Write(stale, r); err != nil {
		t.Fatal(err)
	}
	// A supervisor that is gone, whose pid this process came to hold.
	reused := privateDir(t)
	r = sampleRecord()
	r.SupervisorStart--
	if _, err := Write(reused, r); err != nil {
		t.Fatal(err)
	}
	live := privateDir(t)
	if _, err := Write(live, sampleRecord()); err != nil {
		t.Fatal(err)
	}
	// A dead pid of another pid namespace: from here it cannot be
	// judged, so it stays (a session's own namespace hides its
	// supervisor from the shell, not the other way round).
	elsewhere := privateDir(t)
	r = sampleRecord()
	r.Supervisor, r.SupervisorPidNS = deadPid(t), r.SupervisorPidNS+1
	if _, err := Write(elsewhere, r); err != nil {
		t.Fatal(err)
	}
	privateDir(t)
	for _, d := range []string{stale, reused} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the stale session's folder %s is still there (%v)", d, err)
		}
	}
	for _, d := range []string{live, elsewhere} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("the folder %s was removed: %v", d, err)
		}
	}
}

// A record of a supervisor in another pid namespace (the caller is in a
// session's own, where the supervisor is not seen) is judged by its
// place alone: its pid says nothing here.
func TestReadAnotherPidNamespace(t *testing.T) {
	dir := privateDir(t)
	r := sampleRecord()
	r.Supervisor, r.SupervisorPidNS = deadPid(t), r.SupervisorPidNS+1
	p, err := Write(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Read(p); err != nil {
		t.Errorf("Read(a record of another pid namespace) = %v, want it read", err)
	}
}

// Write refuses a record that names no supervisor: Read would never
// trust it.
func TestWriteNeedsSupervisor(t *testing.T) {
	dir := privateDir(t)
	for _, r := range []*Record{{Values: map[string]any{}}, {Values: map[string]any{}, Supervisor: 1}} {
		if _, err := Write(dir, r); err == nil || !strings.Contains(err.Error(), "names no supervisor") {
			t.Errorf("Write(%+v) = %v, want a refusal", r, err)
		}
	}
}

// Dir takes the runtime folder of a user that is not root from nowhere
// but its uid: $XDG_RUNTIME_DIR must be /run/user/UID, or it is refused.
func TestDirRuntimeFolderOfUser(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("as root the runtime folder is /run/dsh-fs, whatever XDG_RUNTIME_DIR says (TestExecNoRuntimeFolder covers a user)")
	}
	want := filepath.Dir(RuntimeBase())
	for _, xdg := range []string{"", "/tmp", want + "/x"} {
		if _, err := Dir(xdg, nil); err == nil {
			t.Errorf("Dir(%q) = nil, want a refusal", xdg)
		}
	}
}
