package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestTrustedFileWindows: on Windows a trusted file that Everyone may
// write, or that lies in a folder Everyone may write in, is refused,
// FS_CONFIG_INVALID naming the file, the folder at fault and the icacls
// line; this user's own file in this user's folders is read. Under Wine
// an access list stands for a Unix mode, so a whole write is what can be
// granted here.
func TestTrustedFileWindows(t *testing.T) {
	tok, err := windows.OpenCurrentProcessToken()
	if err != nil {
		t.Fatal(err)
	}
	u, err := tok.GetTokenUser()
	tok.Close()
	if err != nil {
		t.Fatal(err)
	}
	me := u.User.Sid.String()
	setDACL := func(p, sddl string) {
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
			t.Fatal(err)
		}
	}
	private := "D:(A;OICI;FA;;;SY)(A;OICI;FA;;;" + me + ")(A;OICI;0x1200a9;;;WD)"
	open := "D:(A;OICI;FA;;;SY)(A;OICI;FA;;;" + me + ")(A;OICI;FA;;;WD)"
	for _, tc := range []struct {
		name       string
		file, etc  string // the access lists of config.yaml and its folder
		fault, why string // "" when read
	}{
		{"private", private, private, "", ""},
		{"a file Everyone may write", open, private, "file", "Everyone (S-1-1-0) may write it"},
		{"a folder Everyone may write in", private, open, "etc", "Everyone (S-1-1-0) may write in the folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, err := os.MkdirTemp("", "config")
			if err != nil {
				t.Fatal(err)
			}
			defer removeTree(root)
			etc, path := filepath.Join(root, "etc"), filepath.Join(root, "etc", "config.yaml")
			for _, d := range []string{etc, filepath.Join(root, "home"), filepath.Join(root, "ws")} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(path, []byte("max_mode: read-only\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			setDACL(path, tc.file)
			setDACL(etc, tc.etc)
			s, err := Load(Source{
				LookupEnv: lookup(map[string]string{}),
				Getwd:     func() (string, error) { return filepath.Join(root, "ws"), nil },
				Locations: Locations{SystemDir: etc, Home: func() (string, error) { return filepath.Join(root, "home"), nil }},
			})
			if tc.fault == "" {
				if err != nil || string(s.Policy.MaxMode) != "read-only" {
					t.Fatalf("Load: %v, want the file read", err)
				}
				return
			}
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if fserr.CodeOf(err) != fserr.ConfigInvalid || !strings.Contains(msg, path) || !strings.Contains(msg, tc.why) || !strings.Contains(msg, "icacls") {
				t.Fatalf("Load = %v (%s), want FS_CONFIG_INVALID naming %s, saying %q and icacls", err, fserr.CodeOf(err), path, tc.why)
			}
			if tc.fault == "etc" && !strings.Contains(msg, etc+": ") {
				t.Errorf("message %q does not name the folder %s", msg, etc)
			}
		})
	}
}

// The default locations on Windows are the known folders', never the
// variables'.
func TestDefaultLocationsWindows(t *testing.T) {
	for _, k := range []string{"APPDATA", "ProgramData", "USERPROFILE", "ALLUSERSPROFILE"} {
		t.Setenv(k, `C:\elsewhere`)
	}
	pd, err := windows.KnownFolderPath(windows.FOLDERID_ProgramData, 0)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := windows.KnownFolderPath(windows.FOLDERID_RoamingAppData, 0)
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(pd, `C:\elsewhere`) || strings.HasPrefix(ad, `C:\elsewhere`) {
		t.Fatalf("the known folders follow the variables: %s, %s", pd, ad)
	}
	l := DefaultLocations()
	if want := filepath.Join(pd, "dsh-fs", "config.yaml"); l.SystemFile() != want {
		t.Errorf("SystemFile = %s, want %s", l.SystemFile(), want)
	}
	if want := filepath.Join(ad, "dsh-fs", "config.yaml"); l.UserFile(`C:\Users\me`) != want {
		t.Errorf("UserFile = %s, want %s", l.UserFile(`C:\Users\me`), want)
	}
}

// removeTree removes dir one entry at a time: under Wine, os.RemoveAll
// fails on a file in a folder ("Invalid function").
func removeTree(dir string) {
	var all []string
	filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error {
		all = append(all, p)
		return nil
	})
	for i := len(all) - 1; i >= 0; i-- {
		os.Remove(all[i])
	}
}

// TestUserFileProtectedWindows: the trusted user file on Windows,
// %APPDATA%\dsh-fs\config.yaml, is a protected path of every call, as
// ~/.config/dsh-fs/config.yaml is on Unix: a session whose workspace holds
// it cannot create or replace it, by any case of its name, nor move its
// folder away, and the folder's other files stay writable.
func TestUserFileProtectedWindows(t *testing.T) {
	base, err := os.MkdirTemp("", "appdata")
	if err != nil {
		t.Fatal(err)
	}
	defer removeTree(base)
	if err := os.MkdirAll(filepath.Join(base, "dsh-fs"), 0o755); err != nil {
		t.Fatal(err)
	}
	loc := Locations{SystemDir: filepath.Join(base, "etc"), Home: func() (string, error) { return filepath.Join(base, "home"), nil },
		UserDir: func() (string, error) { return filepath.Join(base, "dsh-fs"), nil }}
	s, err := Load(Source{Locations: loc, Getwd: func() (string, error) { return base, nil },
		LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	f := sandbox.NewFence(s.Policy)
	check := func(op, path string, denied bool) {
		t.Helper()
		tgt, err := f.Resolve(path)
		if err == nil {
			err = f.WouldWrite(op, &tgt, sandbox.Intent{})
		}
		if got := fserr.CodeOf(err) == fserr.SandboxDenied; got != denied {
			t.Errorf("%s %s: %v, want denied = %t", op, path, err, denied)
		}
	}
	for _, p := range []string{`dsh-fs\config.yaml`, `DSH-FS\Config.YAML`, filepath.Join(base, "dsh-fs", "config.yaml")} {
		check("write", p, true)
	}
	check("write", `dsh-fs\other.yaml`, false)
	if err := os.WriteFile(filepath.Join(base, "dsh-fs", "config.yaml"), []byte("mode: read-only\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("write", `dsh-fs\CONFIG.yaml`, true)
	src, err := f.Resolve("dsh-fs")
	if err != nil {
		t.Fatal(err)
	}
	dst, err := f.Resolve("moved")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Move("move", src, dst, sandbox.Intent{}); fserr.CodeOf(err) != fserr.SandboxDenied {
		t.Errorf("move the folder of the user file away: %v, want denied", err)
	}
}
