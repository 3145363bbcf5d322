package trust

import (
	"fmt"
	"strings"
)

// On Windows a trusted file and the folders above it are judged by their
// owner and access list (docs/design.md §2, Trusted files on Windows), as
// their owner and mode are on Unix. The decision is here, on values, so it
// is tested on every OS; owner_windows.go reads the values from a handle.

// ACE is one entry of an access list as the decision reads it.
type ACE struct {
	Type  uint8  // the ACE_HEADER's AceType (aceAllowed, aceDenied, …)
	Flags uint8  // the ACE_HEADER's AceFlags (aceInheritOnly, …)
	Mask  uint32 // the rights it grants or denies
	SID   string // whom, as a string SID ("S-1-5-18")
}

// Security is what a file's security descriptor says about who may
// write it.
type Security struct {
	Owner string // a string SID
	// NullDACL: the descriptor has no access list, or a null one, and
	// then everyone may do everything.
	NullDACL bool
	DACL     []ACE
}

// The ACE types and flags the decision reads (winnt.h).
const (
	aceAllowed               = 0x0
	aceDenied                = 0x1
	aceAllowedCompound       = 0x4
	aceAllowedObject         = 0x5
	aceDeniedObject          = 0x6
	aceAllowedCallback       = 0x9
	aceDeniedCallback        = 0xA
	aceAllowedCallbackObject = 0xB
	aceDeniedCallbackObject  = 0xC
	aceInheritOnly           = 0x08
)

// The rights the decision reads (winnt.h). A folder's FILE_ADD_FILE and
// FILE_ADD_SUBDIRECTORY are a file's FILE_WRITE_DATA and FILE_APPEND_DATA.
const (
	rightWriteData   = 0x2 // FILE_WRITE_DATA, FILE_ADD_FILE
	rightAppendData  = 0x4 // FILE_APPEND_DATA, FILE_ADD_SUBDIRECTORY
	rightDeleteChild = 0x40
	rightDelete      = 0x10000
	rightWriteDAC    = 0x40000
	rightWriteOwner  = 0x80000
	rightGenericAll  = 0x10000000
	rightGenericW    = 0x40000000

	// fileWrites are the rights by which someone could change what a
	// file says, or give themselves the right to: its data, its
	// access list, its owner, or the file itself (deleted, renamed, so
	// another takes its name). GENERIC_WRITE and GENERIC_ALL hold
	// FILE_WRITE_DATA.
	fileWrites = rightWriteData | rightAppendData | rightDelete | rightWriteDAC | rightWriteOwner | rightGenericW | rightGenericAll
	// folderAdds let someone add an entry to a folder, never remove or
	// rename one: GENERIC_WRITE maps to FILE_GENERIC_WRITE, which holds
	// FILE_ADD_FILE and FILE_ADD_SUBDIRECTORY and no delete right.
	folderAdds = rightWriteData | rightAppendData | rightGenericW
	// folderReplaces let someone remove or rename an entry of a folder
	// (so theirs takes its name), or the folder itself, or change who
	// may.
	folderReplaces = rightDeleteChild | rightDelete | rightWriteDAC | rightWriteOwner | rightGenericAll
)

// The SIDs whose grants never make a file untrusted: they are the
// administrators' (root's) or the owner's.
const (
	sidSystem          = "S-1-5-18"
	sidAdministrators  = "S-1-5-32-544"
	sidTrustedInstall  = "S-1-5-80-956008885-3425965393-1520536458-1451291556-2340467587"
	sidOwnerRights     = "S-1-3-4"
	sidEveryone        = "S-1-1-0"
	sidAuthenticated   = "S-1-5-11"
	sidUsers           = "S-1-5-32-545"
	sidCreatorOwner    = "S-1-3-0"
	sidInteractive     = "S-1-5-4"
	sidAnonymous       = "S-1-5-7"
	sidLocalService    = "S-1-5-19"
	sidNetworkService  = "S-1-5-20"
	sidGuests          = "S-1-5-32-546"
	sidPowerUsers      = "S-1-5-32-547"
	sidAllAppPackages  = "S-1-15-2-1"
	sidRestrictedCode  = "S-1-5-12"
	sidWriteRestricted = "S-1-5-33"
)

var sidNames = map[string]string{
	sidSystem: "SYSTEM", sidAdministrators: "Administrators", sidTrustedInstall: "TrustedInstaller",
	sidOwnerRights: "OWNER RIGHTS", sidEveryone: "Everyone", sidAuthenticated: "Authenticated Users",
	sidUsers: "Users", sidCreatorOwner: "CREATOR OWNER", sidInteractive: "INTERACTIVE",
	sidAnonymous: "ANONYMOUS LOGON", sidLocalService: "LOCAL SERVICE", sidNetworkService: "NETWORK SERVICE",
	sidGuests: "Guests", sidPowerUsers: "Power Users", sidAllAppPackages: "ALL APPLICATION PACKAGES",
	sidRestrictedCode: "RESTRICTED", sidWriteRestricted: "WRITE RESTRICTED",
}

// sidName is a SID as a message shows it: its well-known name beside it.
func sidName(sid string) string {
	if n, ok := sidNames[sid]; ok {
		return n + " (" + sid + ")"
	}
	return sid
}

// ownerTrustedSID reports whether owner may own a trusted file: SYSTEM,
// Administrators, TrustedInstaller (root's on Unix) or self, this
// process's user.
func ownerTrustedSID(owner, self string) bool {
	switch owner {
	case sidSystem, sidAdministrators, sidTrustedInstall:
		return true
	}
	return owner != "" && owner == self
}

// The rule JudgeSecurity applies (docs/design.md §2):
//
//   - the owner is SYSTEM, Administrators, TrustedInstaller or self (an
//     owner may always rewrite its access list);
//   - there is an access list (a null one lets everyone do everything);
//   - no access-allowed entry that applies to it (inherit-only entries
//     only pass to new children) grants another SID a right to write:
//     for a file, FILE_WRITE_DATA, FILE_APPEND_DATA, DELETE, WRITE_DAC,
//     WRITE_OWNER, GENERIC_WRITE or GENERIC_ALL; for a folder,
//     FILE_DELETE_CHILD, DELETE, WRITE_DAC, WRITE_OWNER or GENERIC_ALL,
//     and, unless addOnly, FILE_ADD_FILE, FILE_ADD_SUBDIRECTORY or
//     GENERIC_WRITE. The SIDs that are not another are SYSTEM,
//     Administrators, TrustedInstaller, OWNER RIGHTS (the owner, judged
//     above) and self;
//   - an allowed entry of a kind it does not read (object, callback,
//     compound) refuses; denied entries are not subtracted, so a grant a
//     deny would cancel still refuses.
//
// addOnly is the sticky folder's counterpart (/tmp): a folder where
// others may add entries but neither remove nor rename one, as
// C:\ProgramData lets Users, is no fault, since an entry there is
// replaced only by its owner, and a file someone else added is theirs.

// JudgeSecurity says why a file (or, with folder, a folder) whose
// descriptor is s could have been written by someone but the
// administrators and self, this process's user, or "" when it could
// not. addOnly allows a folder where others may only add entries.
func JudgeSecurity(s Security, self string, folder, addOnly bool) string {
	if !ownerTrustedSID(s.Owner, self) {
		return fmt.Sprintf("owned by %s, neither an administrator nor this user", sidName(s.Owner))
	}
	if s.NullDACL {
		return "it has no access list, so everyone may write it"
	}
	for _, a := range s.DACL {
		switch a.Type {
		case aceDenied, aceDeniedObject, aceDeniedCallback, aceDeniedCallbackObject:
			continue
		case aceAllowedCompound, aceAllowedObject, aceAllowedCallback, aceAllowedCallbackObject:
			return fmt.Sprintf("an access entry of type %d for %s, which dsh-fs does not read", a.Type, sidName(a.SID))
		case aceAllowed:
		default:
			continue // audit, alarm and label entries grant nothing
		}
		if a.Flags&aceInheritOnly != 0 {
			continue
		}
		switch a.SID {
		case sidSystem, sidAdministrators, sidTrustedInstall, sidOwnerRights:
			continue
		}
		if a.SID == self && self != "" {
			continue
		}
		bad := uint32(fileWrites)
		if folder {
			bad = folderReplaces
			if !addOnly {
				bad |= folderAdds
			}
		}
		if a.Mask&bad != 0 {
			what := "write it"
			if folder {
				what = "write in the folder"
			}
			return fmt.Sprintf("%s may %s (%s)", sidName(a.SID), what, rightNames(a.Mask&bad, folder))
		}
	}
	return ""
}

// rightNames names the rights of mask, as icacls's documentation does.
func rightNames(mask uint32, folder bool) string {
	names := []struct {
		bit        uint32
		file, fold string
	}{
		{rightWriteData, "FILE_WRITE_DATA", "FILE_ADD_FILE"},
		{rightAppendData, "FILE_APPEND_DATA", "FILE_ADD_SUBDIRECTORY"},
		{rightDeleteChild, "FILE_DELETE_CHILD", "FILE_DELETE_CHILD"},
		{rightDelete, "DELETE", "DELETE"},
		{rightWriteDAC, "WRITE_DAC", "WRITE_DAC"},
		{rightWriteOwner, "WRITE_OWNER", "WRITE_OWNER"},
		{rightGenericW, "GENERIC_WRITE", "GENERIC_WRITE"},
		{rightGenericAll, "GENERIC_ALL", "GENERIC_ALL"},
	}
	var out []string
	for _, n := range names {
		if mask&n.bit != 0 {
			if folder {
				out = append(out, n.fold)
			} else {
				out = append(out, n.file)
			}
		}
	}
	return strings.Join(out, ", ")
}
