package trust

import (
	"strings"
	"testing"
)

// JudgeSecurity, the Windows rule as values: each way someone but the
// administrators and this user could write a trusted file or replace it
// through a folder is refused and named; the access lists Windows gives
// a user's AppData and an administrator's ProgramData folder pass.
func TestJudgeSecurity(t *testing.T) {
	const self = "S-1-5-21-1-2-3-1001"
	const other = "S-1-5-21-1-2-3-1002"
	allow := func(sid string, mask uint32) ACE { return ACE{Type: aceAllowed, Mask: mask, SID: sid} }
	full := uint32(0x1F01FF)                     // FILE_ALL_ACCESS
	readExec := uint32(0x1200A9)                 // FILE_GENERIC_READ | FILE_GENERIC_EXECUTE
	modify := uint32(0x1301BF)                   // icacls's (M)
	usersAdd := uint32(0x2 | 0x4 | 0x10 | 0x100) // ProgramData's Users:(CI)(WD,AD,WEA,WA)
	// What Windows gives a file in a user's AppData, and in a folder an
	// administrator made under ProgramData.
	appData := []ACE{allow(sidSystem, full), allow(sidAdministrators, full), allow(self, full)}
	programData := []ACE{allow(sidSystem, full), allow(sidAdministrators, full), allow(sidUsers, readExec),
		{Type: aceAllowed, Flags: aceInheritOnly | 0x3, Mask: 0x10000000, SID: sidCreatorOwner}}
	for _, tc := range []struct {
		name            string
		s               Security
		folder, addOnly bool
		want            string // "" when trusted, else part of the reason
	}{
		{"a file in AppData", Security{Owner: self, DACL: appData}, false, false, ""},
		{"a file an administrator owns", Security{Owner: sidAdministrators, DACL: programData}, false, false, ""},
		{"a file SYSTEM owns", Security{Owner: sidSystem, DACL: programData}, false, false, ""},
		{"a file TrustedInstaller owns", Security{Owner: sidTrustedInstall, DACL: programData}, false, false, ""},
		{"another user's file", Security{Owner: other, DACL: appData}, false, false, "owned by " + other},
		{"a file Users own", Security{Owner: sidUsers, DACL: appData}, false, false, "owned by Users (S-1-5-32-545)"},
		{"no owner", Security{DACL: appData}, false, false, "owned by"},
		{"a null access list", Security{Owner: self, NullDACL: true}, false, false, "no access list"},
		{"an empty access list (nobody may do anything)", Security{Owner: self}, false, false, ""},
		{"Everyone may write", Security{Owner: self, DACL: append(appData, allow(sidEveryone, 0x2))}, false, false, "Everyone (S-1-1-0) may write it (FILE_WRITE_DATA)"},
		{"Users may append", Security{Owner: self, DACL: append(appData, allow(sidUsers, 0x4))}, false, false, "Users (S-1-5-32-545) may write it (FILE_APPEND_DATA)"},
		{"Authenticated Users may modify", Security{Owner: self, DACL: append(appData, allow(sidAuthenticated, modify))}, false, false, "Authenticated Users"},
		{"another user may delete", Security{Owner: self, DACL: append(appData, allow(other, rightDelete))}, false, false, "(DELETE)"},
		{"another user may change the access list", Security{Owner: self, DACL: append(appData, allow(other, rightWriteDAC))}, false, false, "(WRITE_DAC)"},
		{"another user may take ownership", Security{Owner: self, DACL: append(appData, allow(other, rightWriteOwner))}, false, false, "(WRITE_OWNER)"},
		{"GENERIC_WRITE", Security{Owner: self, DACL: append(appData, allow(other, rightGenericW))}, false, false, "(GENERIC_WRITE)"},
		{"GENERIC_ALL", Security{Owner: self, DACL: append(appData, allow(other, rightGenericAll))}, false, false, "(GENERIC_ALL)"},
		{"others may read, and write attributes and extended attributes", Security{Owner: self, DACL: append(appData, allow(other, readExec|0x10|0x100))}, false, false, ""},
		{"an inherit-only grant passes only to new children", Security{Owner: self, DACL: append(appData, ACE{Type: aceAllowed, Flags: aceInheritOnly, Mask: full, SID: sidEveryone})}, false, false, ""},
		{"OWNER RIGHTS is the owner", Security{Owner: self, DACL: append(appData, allow(sidOwnerRights, full))}, false, false, ""},
		{"a deny does not cancel a grant", Security{Owner: self, DACL: append([]ACE{{Type: aceDenied, Mask: full, SID: sidEveryone}}, append(appData, allow(sidEveryone, 0x2))...)}, false, false, "Everyone"},
		{"an object entry it does not read", Security{Owner: self, DACL: append(appData, ACE{Type: aceAllowedObject, Mask: 0x1, SID: other})}, false, false, "type 5"},
		{"a callback entry it does not read", Security{Owner: self, DACL: append(appData, ACE{Type: aceAllowedCallback, Mask: 0x1, SID: other})}, false, false, "type 9"},

		{"a private folder", Security{Owner: self, DACL: appData}, true, false, ""},
		{"a folder others may add to", Security{Owner: sidAdministrators, DACL: append(programData, allow(sidUsers, usersAdd))}, true, false, "Users (S-1-5-32-545) may write in the folder (FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY)"},
		{"a folder others may add to, add-only allowed", Security{Owner: sidAdministrators, DACL: append(programData, allow(sidUsers, usersAdd))}, true, true, ""},
		{"GENERIC_WRITE on a folder adds only", Security{Owner: sidAdministrators, DACL: append(programData, allow(sidUsers, rightGenericW))}, true, true, ""},
		{"a folder others may delete entries of", Security{Owner: sidAdministrators, DACL: append(programData, allow(sidUsers, rightDeleteChild))}, true, true, "(FILE_DELETE_CHILD)"},
		{"a folder others may rename", Security{Owner: sidAdministrators, DACL: append(programData, allow(sidUsers, rightDelete))}, true, true, "(DELETE)"},
		{"a folder others may modify", Security{Owner: sidAdministrators, DACL: append(programData, allow(sidAuthenticated, modify))}, true, true, "Authenticated Users"},
		{"a folder another user owns", Security{Owner: other, DACL: appData}, true, true, "owned by " + other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := JudgeSecurity(tc.s, self, tc.folder, tc.addOnly)
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("JudgeSecurity = %q, want %q", got, tc.want)
			}
		})
	}
	// Without a user to call self, nobody is self.
	if got := JudgeSecurity(Security{Owner: "", DACL: appData}, "", false, false); got == "" {
		t.Error("an empty owner is trusted where self is unknown")
	}
}
