package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// setDACL replaces p's access list with the one sddl describes (as
// icacls /inheritance:r /grant:r would).
func setDACL(t *testing.T, p, sddl string) {
	t.Helper()
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(p, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatalf("SetNamedSecurityInfo(%s): %v", p, err)
	}
}

// The Windows rule on real files, read from the handle: this user's
// file in this user's folders is trusted and its real path found; one
// Everyone may write is refused, and so is every file below a folder
// Everyone may write in, named at that folder. Under Wine a file's
// owner is always this user and its access list stands for its Unix
// mode, so another owner, and a grant that is not a whole write, cannot
// be made here: TestJudgeSecurity holds those as values.
func TestCheckTrustedWindows(t *testing.T) {
	dir := tempDir(t)
	sub := filepath.Join(dir, "dsh-fs")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sub, "config.yaml")
	if err := os.WriteFile(p, []byte("mode: read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	me := selfSID()
	if me == "" {
		t.Fatal("this process's user cannot be read")
	}
	check := func() error {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := CheckTrustedOpened(p, f); err != nil {
			return err
		}
		real, err := CheckTrustedPath(p, true)
		if err != nil {
			return err
		}
		opened, err := OpenedPath(f)
		if err != nil {
			t.Fatal(err)
		}
		if !SamePath(real, opened) {
			t.Errorf("CheckTrustedPath = %s, the opened file is %s", real, opened)
		}
		return nil
	}
	if err := check(); err != nil {
		t.Fatalf("this user's own file: %v", err)
	}

	setDACL(t, p, "D:(A;;FA;;;SY)(A;;FA;;;"+me+")(A;;0x2;;;WD)")
	var ue *UnsafeError
	if err := check(); !errors.As(err, &ue) || ue.Path != p || !strings.Contains(ue.Why, "Everyone (S-1-1-0) may write it") {
		t.Errorf("a file Everyone may write: %v", err)
	}
	setDACL(t, p, "D:(A;;FA;;;SY)(A;;FA;;;"+me+")(A;;FR;;;WD)")
	if err := check(); err != nil {
		t.Errorf("a file Everyone may read only: %v", err)
	}

	setDACL(t, sub, "D:(A;OICI;FA;;;SY)(A;OICI;FA;;;"+me+")(A;OICI;FA;;;WD)")
	if err := check(); !errors.As(err, &ue) || ue.Path != sub || !strings.Contains(ue.Why, "Everyone (S-1-1-0) may write in the folder") {
		t.Errorf("a file in a folder Everyone may write in: %v", err)
	}
	if err := CheckTrustedFolders(sub, true); !errors.As(err, &ue) || ue.Path != sub {
		t.Errorf("CheckTrustedFolders(a folder Everyone may write in) = %v", err)
	}
	setDACL(t, sub, "D:(A;OICI;FA;;;SY)(A;OICI;FA;;;"+me+")(A;OICI;0x1200a9;;;WD)")

	// A link on the way is never passed.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Logf("no symlink here (%v): the reparse-point case is not run", err)
		return
	}
	_, err := CheckTrustedPath(filepath.Join(link, "config.yaml"), true)
	if !errors.As(err, &ue) || ue.Path != link {
		t.Fatalf("CheckTrustedPath through a symlink = %v", err)
	}
	if !strings.Contains(ue.Why, "reparse point") {
		// Wine makes the link but cannot open the link itself.
		t.Logf("the symlink is refused, though not as a reparse point: %v", err)
	}
}

// tempDir is t.TempDir, removed one entry at a time: under Wine,
// os.RemoveAll fails on a file in a subfolder ("Invalid function").
func tempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "trust")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var all []string
		filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error {
			all = append(all, p)
			return nil
		})
		for i := len(all) - 1; i >= 0; i-- {
			os.Remove(all[i])
		}
	})
	return dir
}
