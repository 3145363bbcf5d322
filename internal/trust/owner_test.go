//go:build unix

package trust

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// parseIDMapping: root counts as mapped only when a line maps uid 0
// inside; an unreadable map or overflow uid leaves the mapping unknown,
// and an unknown mapping never makes the overflow uid root.
func TestParseIDMapping(t *testing.T) {
	for _, tc := range []struct {
		name, uidMap, overflow string
		want                   idMapping
	}{
		{"the initial namespace", "         0          0 4294967295\n", "65534\n", idMapping{known: true, rootMapped: true, overflow: 65534}},
		{"a user mapped to itself", "     23456      23456          1\n", "65534\n", idMapping{known: true, overflow: 65534}},
		{"root mapped to a user", "0 1000 1\n", "65534\n", idMapping{known: true, rootMapped: true, overflow: 65534}},
		{"a range above root", "1 100000 65536\n", "65534", idMapping{known: true, overflow: 65534}},
		{"several lines, root in the second", "1000 1000 1\n0 0 1\n", "65534\n", idMapping{known: true, rootMapped: true, overflow: 65534}},
		{"an empty map (nothing mapped yet)", "", "65534\n", idMapping{known: true, overflow: 65534}},
		{"another overflow uid", "1000 1000 1\n", "4242\n", idMapping{known: true, overflow: 4242}},
		{"a malformed map", "0 0\n", "65534\n", idMapping{}},
		{"a malformed overflow uid", "1000 1000 1\n", "nobody\n", idMapping{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseIDMapping([]byte(tc.uidMap), []byte(tc.overflow)); got != tc.want {
				t.Errorf("parseIDMapping(%q, %q) = %+v, want %+v", tc.uidMap, tc.overflow, got, tc.want)
			}
		})
	}
}

// In a namespace that maps root (this one, in a test run), the overflow
// uid is an ordinary owner, not root: only 0 and this user are trusted.
func TestOwnerTrustedMappedRoot(t *testing.T) {
	if m := idMap(); !m.known || !m.rootMapped {
		t.Skipf("this test runs in a user namespace that does not map root (%+v)", m)
	}
	euid := uint32(os.Geteuid())
	for _, tc := range []struct {
		uid  uint32
		want bool
	}{{0, true}, {euid, true}, {65534, euid == 65534}, {23456, euid == 23456}, {1, euid == 1}} {
		if got := OwnerTrusted(tc.uid); got != tc.want {
			t.Errorf("OwnerTrusted(%d) = %v, want %v (euid %d)", tc.uid, got, tc.want, euid)
		}
	}
	if euid != 65534 && OwnerIsRoot(65534) {
		t.Error("OwnerIsRoot(65534) where root is mapped")
	}
}

// In a user namespace that maps an ordinary user alone (a dsh-fs exec
// session's), root's files show as the overflow uid, which then stands
// for root: "/" is trusted, and so is this user's own file. The child
// runs this test binary there as uid 23456.
func TestOwnerTrustedUnmappedRoot(t *testing.T) {
	if os.Getenv("OWNER_CHILD") != "" {
		t.Skip("in the child")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a child in a user namespace as another uid")
	}
	dir := t.TempDir()
	for d := dir; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	own := filepath.Join(dir, "own")
	if err := os.WriteFile(own, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chown(own, 23456, 23456)
	// The binary must be reachable by uid 23456.
	bin := filepath.Join(dir, "trust.test")
	if data, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(bin, data, 0o755) != nil {
		t.Fatal("cannot copy the test binary")
	}
	c := exec.Command(bin, "-test.run=^TestOwnerTrustedUnmappedRootChild$", "-test.v")
	c.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0", "OWNER_CHILD=1", "OWNER_FILE="+own)
	c.Dir = "/"
	asUnmappedUser(t, c, 23456)
	out, err := c.CombinedOutput()
	if err != nil && strings.Contains(string(out), "operation not permitted") {
		t.Skipf("no user namespace here: %v\n%s", err, out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestOwnerTrustedUnmappedRootChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestOwnerTrustedUnmappedRootChild is TestOwnerTrustedUnmappedRoot's
// child; it does nothing elsewhere.
func TestOwnerTrustedUnmappedRootChild(t *testing.T) {
	if os.Getenv("OWNER_CHILD") == "" {
		t.Skip("run by TestOwnerTrustedUnmappedRoot in a user namespace of its own")
	}
	m := idMap()
	if !m.known || m.rootMapped || os.Geteuid() != 23456 {
		t.Fatalf("mapping %+v, euid %d: want root unmapped, euid 23456", m, os.Geteuid())
	}
	fi, err := os.Lstat("/")
	if err != nil {
		t.Fatal(err)
	}
	rootUID := fi.Sys().(*syscall.Stat_t).Uid
	if rootUID != m.overflow {
		t.Fatalf("/ shows as uid %d here, want the overflow uid %d", rootUID, m.overflow)
	}
	if !OwnerIsRoot(rootUID) || !OwnerTrusted(rootUID) {
		t.Errorf("the overflow uid %d is not taken for root where root is unmapped", rootUID)
	}
	if OwnerIsRoot(23456) || !OwnerTrusted(23456) {
		t.Error("this user is taken for root, or not trusted")
	}
	// Root's folders, each showing as the overflow uid here.
	if err := CheckTrustedFolders("/usr/bin", false); err != nil {
		t.Errorf("root's /usr/bin is not trusted from here: %v", err)
	}
	if err := CheckTrustedFolders(filepath.Dir(os.Getenv("OWNER_FILE")), true); err != nil {
		t.Errorf("the folders above this user's file, root's, are not trusted: %v", err)
	}
	fi, err = os.Stat(os.Getenv("OWNER_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckTrustedFile(os.Getenv("OWNER_FILE"), fi); err != nil {
		t.Errorf("this user's own file: %v", err)
	}
}

// CheckTrustedFolders and CheckTrustedFile: each way another user could
// replace or rewrite a file is named, at the folder or file at fault; a
// sticky folder is no fault where sticky folders are allowed.
func TestCheckTrusted(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	mk := func(rel string, mode os.FileMode) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	safe := mk("safe", 0o755)
	open := mk("open", 0o777)
	group := mk("group", 0o775)
	sticky := mk("sticky", 0o777|os.ModeSticky)
	below := mk("open/below", 0o755)
	for _, tc := range []struct {
		name   string
		dir    string
		sticky bool
		fault  string // "" when trusted
		why    string
	}{
		// t.TempDir lies in /tmp, itself sticky: sticky folders are
		// allowed but where a case says not.
		{"a private chain", safe, true, "", ""},
		{"a folder others may write", open, true, open, "mode 0777"},
		{"a folder its group may write", group, true, group, "mode 0775"},
		{"a folder above one that others may write", below, true, open, "mode 0777"},
		{"a sticky folder, allowed", sticky, true, "", ""},
		{"a sticky folder, not allowed", sticky, false, firstSticky(t, sticky), "mode 1777"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckTrustedFolders(tc.dir, tc.sticky)
			if tc.fault == "" {
				if err != nil {
					t.Errorf("CheckTrustedFolders(%s) = %v, want nil", tc.dir, err)
				}
				return
			}
			var ue *UnsafeError
			if !errors.As(err, &ue) || ue.Path != tc.fault || !strings.Contains(ue.Why, tc.why) {
				t.Errorf("CheckTrustedFolders(%s) = %v, want %s at fault saying %q", tc.dir, err, tc.fault, tc.why)
			}
		})
	}

	file := func(mode os.FileMode, uid int) os.FileInfo {
		p := filepath.Join(safe, "f")
		os.Remove(p)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		if uid >= 0 {
			os.Chown(p, uid, uid)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	for _, tc := range []struct {
		name string
		mode os.FileMode
		uid  int
		why  string
	}{
		{"0644", 0o644, -1, ""},
		{"0400", 0o400, -1, ""},
		{"0666", 0o666, -1, "others may write it (mode 0666)"},
		{"0664", 0o664, -1, "others may write it (mode 0664)"},
		{"0646", 0o646, -1, "others may write it (mode 0646)"},
		{"another user's", 0o644, 23456, "owned by uid 23456"},
	} {
		t.Run("file "+tc.name, func(t *testing.T) {
			if tc.uid >= 0 && os.Geteuid() != 0 {
				t.Skip("needs root to give a file to another user")
			}
			err := CheckTrustedFile("f", file(tc.mode, tc.uid))
			if tc.why == "" && err != nil || tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)) {
				t.Errorf("CheckTrustedFile(%s) = %v, want %q", tc.name, err, tc.why)
			}
		})
	}
	if err := CheckTrustedFile("safe", mustLstat(t, safe)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("CheckTrustedFile(a folder) = %v", err)
	}
}

// firstSticky is the highest folder on the way to dir that has the
// sticky bit: /tmp, where t.TempDir is, when nothing moved it.
func firstSticky(t *testing.T, dir string) string {
	t.Helper()
	var parts []string
	for d := dir; d != "/"; d = filepath.Dir(d) {
		parts = append(parts, d)
	}
	for i := len(parts) - 1; i >= 0; i-- {
		if mustLstat(t, parts[i]).Mode()&os.ModeSticky != 0 {
			return parts[i]
		}
	}
	return dir
}

func mustLstat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// BenchmarkCheckTrustedPath is the cost every call pays per trusted
// file it finds: one lstat per component of /etc/dsh-fs/config.yaml's
// depth.
func BenchmarkCheckTrustedPath(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "etc", "dsh-fs", "config.yaml")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, nil, 0o644)
	for b.Loop() {
		if _, err := CheckTrustedPath(p, true); err != nil {
			b.Fatal(err)
		}
	}
}
