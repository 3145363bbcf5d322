package session

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

func sampleRecord(roots ...string) *Record {
	return &Record{Values: map[string]any{"mode": "workspace-write"}, Roots: roots}
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
	for _, tc := range []struct {
		name string
		path func() string
		why  string
	}{
		{"in one of its roots", inRoot, "lies in the writable root"},
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
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := privateDir(t)
	if _, err := Write(stale, &Record{Values: map[string]any{}, Supervisor: dead.Process.Pid}); err != nil {
		t.Fatal(err)
	}
	start, err := StartTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// A supervisor that is gone, whose pid this process came to hold.
	reused := privateDir(t)
	if _, err := Write(reused, &Record{Values: map[string]any{}, Supervisor: os.Getpid(), SupervisorStart: start - 1}); err != nil {
		t.Fatal(err)
	}
	live := privateDir(t)
	if _, err := Write(live, &Record{Values: map[string]any{}, Supervisor: os.Getpid(), SupervisorStart: start}); err != nil {
		t.Fatal(err)
	}
	privateDir(t)
	for _, d := range []string{stale, reused} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("the stale session's folder %s is still there (%v)", d, err)
		}
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live session's folder was removed: %v", err)
	}
}
