// Package sandbox is the policy of dsh-fs for a Go program that wants the
// fence in its own process: a coding agent or a harness written in Go.
// Open loads the policy exactly as the dsh-fs command loads it
// (docs/design.md §2): the built-in defaults, the trusted files at this
// build's places (/etc/dsh-fs/config.yaml, the user's
// ~/.config/dsh-fs/config.yaml with the home folder from the user
// database, capped by /etc/dsh-fs/requirements.yaml), the record of the
// dsh-fs exec session the process runs in (DSH_FS_SESSION), then the
// session sources, which may only narrow it: the process's DSH_FS_*
// variables and the Options. Package
// github.com/dshfs/dsh-fs/pkg/fsops runs the file operations under it,
// through the same fence and the same typed requests as the command, and
// github.com/dshfs/dsh-fs/pkg/diff is the bounded diff their results
// carry.
//
// It is safe to embed: nothing in this package or in fsops restricts the
// process that calls it. The dsh-fs command puts its own short-lived
// process under Landlock before its first write (the enforce setting);
// in a program that does other work the same restriction would bind
// every thread of it for good, so here the kernel layer is applied only
// when the program calls [Sandbox.RestrictProcess]. Every call is fenced
// all the same: paths are resolved and opened beneath the writable roots
// through confined handles, never by name, and a refusal is an error
// whose [Code] is FS_SANDBOX_DENIED.
package sandbox

// Mode is a sandbox mode (docs/design.md §1).
type Mode string

// The modes, narrowest first.
const (
	// ReadOnly denies every mutation.
	ReadOnly Mode = "read-only"
	// WorkspaceWrite allows mutations beneath the writable roots, outside
	// every protected path.
	WorkspaceWrite Mode = "workspace-write"
	// DangerFullAccess allows mutations anywhere the operating system
	// does.
	DangerFullAccess Mode = "danger-full-access"
)

// Options are what the calling program says of the policy. Each is a
// session source, as the dsh-fs command's flag of the same meaning is: it
// may narrow the trusted policy, never widen it, and one that would is an
// error whose Code is FS_SANDBOX_DENIED.
type Options struct {
	// Dir is the workspace root and the base of relative paths (--cwd);
	// "" is the process's working directory. It is a writable root when
	// the trusted policy lets it be one (not too broad, within
	// workspaces).
	Dir string
	// Mode narrows the trusted mode (--mode); "" keeps it.
	Mode Mode
	// WritableRoots are extra writable roots (--writable-root), each
	// beneath a trusted allow_roots entry or a root already writable.
	WritableRoots []string
	// ConfigFile is a session config file (--config), which may only
	// narrow the policy; "" reads DSH_FS_CONFIG, as the command does.
	ConfigFile string
}

// Sandbox is a loaded policy. It is immutable and safe for concurrent use;
// each operation of fsops under it is one call with a fence of its own,
// as each run of the dsh-fs command is.
type Sandbox struct {
	st *state
}

// Open loads the policy as the dsh-fs command loads it, with opt as the
// session's sources. A malformed or untrusted config file is an error
// whose Code is FS_CONFIG_INVALID; an option that would widen the trusted
// policy, FS_SANDBOX_DENIED. Open reads files and the environment only:
// it changes nothing, and restricts nothing.
func Open(opt Options) (*Sandbox, error) {
	st, err := load(opt)
	if err != nil {
		return nil, err
	}
	return &Sandbox{st: st}, nil
}

// Mode is the effective mode.
func (s *Sandbox) Mode() Mode { return s.st.mode() }

// Dir is the workspace root, canonical: relative paths are taken from it.
func (s *Sandbox) Dir() string { return s.st.dir() }

// WritableRoots are the canonical writable roots in workspace-write mode
// (the workspace root, the temp areas, the extra roots), none in
// read-only mode. In danger-full-access mode nothing is fenced and the
// list is empty.
func (s *Sandbox) WritableRoots() []string { return s.st.writableRoots() }

// RestrictProcess puts the whole calling process under the kernel layer
// of the policy: Landlock refuses every write outside the writable roots
// (and /dev/null), to every thread of the process and to every process it
// starts, for as long as the process lives. There is no undoing it. It is
// what the dsh-fs command does to its own process before a write, and
// what nothing else in this package does: call it only in a process that
// is to write nowhere else. It applies in workspace-write mode only (in
// the other modes it returns nil and restricts nothing), and fails with
// an error whose Code is FS_CONFIG_INVALID where the kernel has no
// Landlock, whatever the enforce setting.
func (s *Sandbox) RestrictProcess() error { return s.st.restrict() }

// The codes an error of this package or of fsops carries (Code): the
// "code" of the dsh-fs command's JSON result, which docs/design.md §6
// documents. Codes are API: new ones may be added, none is renamed.
const (
	CodeDenied          = "FS_SANDBOX_DENIED"
	CodeNotFound        = "FS_NOT_FOUND"
	CodeIsDir           = "FS_IS_DIR"
	CodeNotDir          = "FS_NOT_DIR"
	CodeBinary          = "FS_BINARY"
	CodeTooLarge        = "FS_TOO_LARGE"
	CodeEditNoMatch     = "FS_EDIT_NO_MATCH"
	CodeEditAmbiguous   = "FS_EDIT_AMBIGUOUS"
	CodeStale           = "FS_STALE"
	CodeExists          = "FS_EXISTS"
	CodePermission      = "FS_PERMISSION"
	CodeNoSpace         = "FS_NO_SPACE"
	CodeInvalidArgument = "FS_INVALID_ARGUMENT"
	CodeConfigInvalid   = "FS_CONFIG_INVALID"
	CodeIO              = "FS_IO"
)

// Code returns the stable code err carries, as the dsh-fs command's JSON
// names it: CodeDenied for a refusal of the fence, CodeNotFound for a
// missing path, and so on; FS_IO for an error that carries none; "" for
// nil. Its message is the command's message.
func Code(err error) string {
	if err == nil {
		return ""
	}
	return codeOf(err)
}
