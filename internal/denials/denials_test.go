package denials

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

func mine(uid uint32) bool { return int(uid) == os.Geteuid() }

// record is the path of a session record in a fresh session folder,
// whose log is open.
func openLog(t *testing.T) (*Log, string) {
	t.Helper()
	dir := t.TempDir()
	l, err := Open(dir, "command")
	if err != nil {
		t.Fatal(err)
	}
	return l, filepath.Join(dir, "session.json")
}

func read(t *testing.T, record string) File {
	t.Helper()
	f, err := Read(record, mine)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAddCountsTheSame: the same denial twice is one entry with a
// count of 2; another rule, path or layer is another entry.
func TestAddCountsTheSame(t *testing.T) {
	l, record := openLog(t)
	if f := read(t, record); len(f.Entries) != 0 {
		t.Fatalf("a new log holds %+v", f.Entries)
	}
	l.Add(Proxy("denied.test", 80, "not in network_allow", "network_allow"))
	l.Add(Proxy("denied.test", 80, "not in network_allow", "network_allow"))
	l.Add(Proxy("denied.test", 443, "not in network_allow", "network_allow"))
	l.Add(Entry{Layer: LayerBroker, Op: "write", Path: "/etc/x", Rule: "escalation not approved"})
	f := read(t, record)
	if len(f.Entries) != 3 || f.Entries[0].Count != 2 || f.Entries[0].Host != "denied.test:80" ||
		f.Entries[1].Count != 1 || f.Entries[2].Path != "/etc/x" {
		t.Errorf("entries %+v; want denied.test:80 twice, :443 once, /etc/x once", f.Entries)
	}
	if f.Entries[0].First == "" || f.Entries[0].Last == "" {
		t.Errorf("no times: %+v", f.Entries[0])
	}
}

// TestAddBounded: past MaxEntries distinct denials, a new one is only
// counted; a known one still counts; a long or invalid field is cut to
// valid UTF-8; the file stays under MaxBytes and reads back.
func TestAddBounded(t *testing.T) {
	l, record := openLog(t)
	long := strings.Repeat("é", MaxField) + "\xff"
	for i := range MaxEntries + 10 {
		l.Add(Entry{Layer: LayerBroker, Op: "write", Path: fmt.Sprintf("/p/%d/%s", i, long), Rule: long})
	}
	l.Add(Entry{Layer: LayerBroker, Op: "write", Path: fmt.Sprintf("/p/%d/%s", 0, long), Rule: long})
	f := read(t, record)
	if len(f.Entries)+f.Dropped != MaxEntries+10 || len(f.Entries) > MaxEntries || f.Entries[0].Count != 2 {
		t.Errorf("%d entries, %d dropped, first counted %d; want %d in all, at most %d kept, the first twice",
			len(f.Entries), f.Dropped, f.Entries[0].Count, MaxEntries+10, MaxEntries)
	}
	for _, e := range f.Entries {
		if len(e.Path) > MaxField || len(e.Rule) > MaxField || !utf8.ValidString(e.Path) || !utf8.ValidString(e.Rule) {
			t.Fatalf("a field not cut to %d bytes of UTF-8: %d, %d", MaxField, len(e.Path), len(e.Rule))
		}
	}
	fi, err := os.Stat(filepath.Join(filepath.Dir(record), Folder, file))
	if err != nil || fi.Size() > MaxBytes || fi.Mode().Perm() != 0o400 {
		t.Errorf("the log: %v, %v; want at most %d bytes, mode 0400", fi, err, MaxBytes)
	}
}

// TestReadRefuses: a log that is a symlink, may be written, or is not a
// log is refused, never read; no log at all reads as empty.
func TestReadRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"symlink", func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "other")
			os.WriteFile(other, []byte(`{"entries":[],"dropped":0}`), 0o400)
			os.Symlink(other, path)
		}, "symbolic link"},
		{"writable", func(t *testing.T, path string) { os.WriteFile(path, []byte(`{"entries":[]}`), 0o600) }, "may be written"},
		{"not a log", func(t *testing.T, path string) { os.WriteFile(path, []byte(`forged`), 0o400) }, "not a denial log"},
		{"too large", func(t *testing.T, path string) {
			os.WriteFile(path, []byte(`{"entries":[],"x":"`+strings.Repeat("a", MaxBytes)+`"}`), 0o400)
		}, "larger than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, Folder), 0o700)
			c.make(t, filepath.Join(dir, Folder, file))
			_, err := Read(filepath.Join(dir, "session.json"), mine)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v; want one saying %q", err, c.want)
			}
		})
	}
	t.Run("foreign", func(t *testing.T) {
		_, record := openLog(t)
		if _, err := Read(record, func(uint32) bool { return false }); err == nil || !strings.Contains(err.Error(), "neither root nor this user") {
			t.Errorf("err %v; want the owner refused", err)
		}
	})
	t.Run("none", func(t *testing.T) {
		f, err := Read(filepath.Join(t.TempDir(), "session.json"), mine)
		if err != nil || f.Entries == nil || len(f.Entries) != 0 {
			t.Errorf("%+v, %v; want an empty log", f, err)
		}
	})
}

// TestBrokered: a refused escalation's result makes an entry naming the
// resolved path and the rule; a success or another failure makes none.
func TestBrokered(t *testing.T) {
	denied := `{"ok":false,"op":"write","path":"../x","resolved":"/srv/x","mode":"workspace-write","error":{"code":"FS_SANDBOX_DENIED","message":"m","reason":"escalation not approved","matched":"approval_command exited with status 1"}}`
	req := wire.Request{Op: "write", Dir: "/srv/ws", Write: &request.Write{Path: "../x"}}
	e, ok := Brokered(req, 3, []byte(denied), "command")
	if !ok || e.Layer != LayerBroker || e.Path != "/srv/x" || e.Rule != "escalation not approved (approval_command exited with status 1)" ||
		!strings.Contains(e.Escalation, "approver (command)") {
		t.Errorf("%+v, %v", e, ok)
	}
	if e, _ := Brokered(req, 3, []byte(denied), "never"); e.Escalation != "no" {
		t.Errorf("under approval never: %q, want no", e.Escalation)
	}
	for _, c := range []struct {
		status int
		out    string
	}{{0, `{"ok":true,"op":"write"}`}, {1, `{"ok":false,"error":{"code":"FS_EXISTS"}}`}, {1, `not json`}, {0, ``}} {
		if _, ok := Brokered(req, c.status, []byte(c.out), "command"); ok {
			t.Errorf("%q made an entry", c.out)
		}
	}
	// A result printed as text: the request's path, known by the status.
	if e, ok := Brokered(req, 3, []byte("dsh-fs: write: ../x: denied\n"), "command"); !ok || e.Path != "/srv/x" || e.Layer != LayerBroker {
		t.Errorf("a text result: %+v, %v; want the write of /srv/x", e, ok)
	}
	var nilLog *Log
	nilLog.Add(Entry{}) // a session without a log keeps nothing, and does not fail
	nilLog.Brokered(req, 3, denied)
}

// TestAddConcurrent: the proxy's refusals come from many connections at
// once; every one is counted, and the log on disk is whole.
func TestAddConcurrent(t *testing.T) {
	l, record := openLog(t)
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 25 {
				l.Add(Proxy("denied.test", 80, "not in network_allow", "network_allow"))
			}
		}()
	}
	for range 8 {
		<-done
	}
	if f := read(t, record); len(f.Entries) != 1 || f.Entries[0].Count != 200 {
		t.Errorf("%+v; want one entry counted 200 times", f.Entries)
	}
}
