package plan

// Files is the session's own view of the file system (docs/design.md
// §10, the mount layer): what the session's shell may neither write nor
// read although the write restriction alone would let it, and what it
// may not rename or remove. On Linux each is a mount in the session's
// private mount namespace, which no other process sees and which ends
// with the session. Every path is canonical; the applier opens each
// without following a symlink and refuses one that changed since the
// plan.
type Files struct {
	// ReadOnly are paths (folders or files) made read-only: the
	// protected paths inside the writable folders, the git folders a
	// .git leads to, and trusted config files inside them.
	ReadOnly []string `json:"read_only"`
	// Hidden are deny_read folders shown empty and read-only.
	Hidden []string `json:"hidden"`
	// HiddenFiles are deny_read files shown empty and read-only.
	HiddenFiles []string `json:"hidden_files"`
	// HiddenSockets are unix sockets of processes outside the session,
	// covered by the empty file so no connection reaches them.
	HiddenSockets []string `json:"hidden_sockets"`
	// OutsideReadOnly says everything is made read-only, metadata
	// included (chmod, chown, utime, xattrs, inode flags), before
	// anything else, with Writable writable again (without devices or
	// set-uid programs).
	OutsideReadOnly bool `json:"outside_read_only"`
	// Writable are the folders that stay writable under OutsideReadOnly.
	Writable []string `json:"writable"`
	// Pinned are folders, outermost first, that can be neither renamed
	// nor removed (EBUSY), so a parent's rename cannot put a planted .git
	// where the protected one was.
	Pinned []string `json:"pinned"`
	// PinnedLinks are symlinks in the writable roots that a protected
	// path is reached through (.codex -> decoy), each mounted over
	// itself, so the session can neither remove nor replace it (EBUSY)
	// with a folder of its own; the folders above are Pinned.
	PinnedLinks []string `json:"pinned_links,omitempty"`
	// Overlays are the toolchain caches seen through a copy-on-write
	// layer, made before OutsideReadOnly, which keeps them writable.
	// OverlayDir, the session's private folder that holds their upper
	// and work folders, is hidden once all is made. OverlayMemory, when
	// not 0, keeps those folders in memory of the session's own, at
	// most that many bytes, made by the applier over an empty
	// OverlayDir (on Linux a tmpfs): nothing written there reaches a
	// disk; 0 has them made on disk already.
	Overlays      []Overlay `json:"overlays,omitempty"`
	OverlayDir    string    `json:"overlay_dir,omitempty"`
	OverlayMemory uint64    `json:"overlay_memory,omitempty"`
	// View is the read view of the home folders, made after the overlays
	// and before OutsideReadOnly; nil without one.
	View *ReadView `json:"read_view,omitempty"`
	// DenyGlobs are the deny_read globs as the fence matches them
	// (absolute, or "**/" and a relative glob), for an enforcer that
	// matches a glob itself on every path (Seatbelt's regexes); the Linux
	// enforcer holds them through Hidden, HiddenFiles and View instead,
	// and does not read this list.
	DenyGlobs []string `json:"deny_globs,omitempty"`
	// Runtime, when not "", is exec's runtime folder, hidden last but for
	// Record, this session's record, and the denial log beside it
	// (DenialsFolder), both read-only.
	Runtime string `json:"runtime,omitempty"`
	Record  string `json:"record,omitempty"`
}

// Empty reports whether applying f would change nothing.
func (f Files) Empty() bool {
	return !f.OutsideReadOnly && f.View == nil && len(f.ReadOnly)+len(f.Hidden)+len(f.HiddenFiles)+len(f.HiddenSockets)+len(f.Pinned)+len(f.PinnedLinks)+len(f.Overlays) == 0
}

// Overlay is one copy-on-write layer: the person's cache at Path as the
// lower layer, Upper and Work private folders of the session, shown at
// Path.
type Overlay struct {
	Path  string `json:"path"`
	Upper string `json:"upper"`
	Work  string `json:"work"`
}

// ReadView is the read view of a session: each home folder of Covered
// shown as an empty read-only folder, into which Kept are put back as
// they are, and Home made an empty folder.
type ReadView struct {
	// Globs are the deny_read globs that no walk can find all of, which
	// the view is made for.
	Globs []string `json:"globs"`
	// Covered are the home folders shown empty.
	Covered []string `json:"covered"`
	// Kept are the paths beneath Covered put back as they are, sorted;
	// Unwalked are those of them no walk of the roots looks in (a cache,
	// a read_home entry), where the Globs are not enforced.
	Kept     []string `json:"kept"`
	Unwalked []string `json:"unwalked"`
	// Home is the home folder, made an empty folder in the view when it
	// lies beneath Covered.
	Home string `json:"home,omitempty"`
	// Why says why no view is made although Globs has a glob; "" when
	// one is.
	Why string `json:"why,omitempty"`
}
