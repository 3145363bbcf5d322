// Package audit is a dsh-fs exec session's audit log (docs/design.md
// §10): one JSON line per event (the session's start with its plan and
// policy sources, each escalation asked and answered as it was shown,
// each brokered call and its result, each decision of the network
// proxy, the end with the git guard's report), appended by the
// supervisor to the file the trusted audit_log names, where the session
// cannot write. Each line carries a sequence number, the time, the
// session, the hash of the line before it and its own, so Verify finds a
// line removed, changed or moved. Contents, diffs and command lines are
// summarized by size and SHA-256; the environment is never written.
package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/trust"
)

// line is one line of the log, without its own hash, which follows it.
// Its fields are in this order in every line.
type line struct {
	Seq     int64  `json:"seq"`
	Time    string `json:"time"`
	Session string `json:"session"`
	Event
	Prev string `json:"prev"`
}

// hashKey is what ends every line: its own hash, over the bytes before
// it (hashSuffixLen in all, the closing brace included).
const hashKey = `,"hash":"`

const hashSuffixLen = len(hashKey) + sha256.Size*2 + len(`"}`)

// maxLine bounds the line read back from the tail of the log: a log whose
// last line is longer is refused, not read without end.
const maxLine = 16 << 20

// Log is a session's audit log. Its methods are safe for concurrent
// use, and a nil *Log writes nothing (no audit_log set, a nested
// session).
type Log struct {
	path    string
	session string
	mu      sync.Mutex
	// failed is the first write that failed; Write reports each.
	failed error
}

// Open readies the audit log at path (absolute, from a trusted source)
// for the session named session, whose writable roots are roots. The
// file must lie outside every root, and it and the folders above it
// must pass the trusted-file checks of docs/design.md §2.7; it is made,
// mode 0600, when it does not exist. Anything else is FS_CONFIG_INVALID
// naming the file, and the session does not start.
func Open(path, session string, roots []string) (*Log, error) {
	bad := func(why string) error {
		return fserr.New(fserr.ConfigInvalid, "config: audit_log "+path+": "+why)
	}
	if !filepath.IsAbs(path) {
		return nil, bad("not an absolute path")
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return nil, bad("its folder: " + err.Error())
	}
	real := filepath.Join(dir, filepath.Base(path))
	for _, r := range roots {
		if sandbox.Beneath(r, real) {
			return nil, bad("it lies in the writable root " + r + ", which the session can write; name a file outside every writable root")
		}
	}
	l := &Log{path: path, session: session}
	f, err := l.open()
	if err != nil {
		return nil, err
	}
	f.Close()
	return l, nil
}

// Failed is the first write to the log that failed, nil when none did.
func (l *Log) Failed() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failed
}

// open opens the log for one append, judged as a trusted file is: the
// folders by lstat, one per component, the file as opened, never through
// a symlink, with one link only (a second name could lie where the
// session writes).
func (l *Log) open() (*os.File, error) {
	untrusted := func(err error) error {
		return fserr.New(fserr.ConfigInvalid, "config: audit_log "+l.path+": not trusted: "+err.Error()+"; "+trustHint)
	}
	if err := trust.CheckTrustedFolders(filepath.Dir(l.path), true); err != nil {
		return nil, untrusted(err)
	}
	f, err := openAppend(l.path)
	var ue *trust.UnsafeError
	if errors.As(err, &ue) {
		return nil, untrusted(err)
	}
	if err != nil {
		return nil, fserr.FromOS("audit_log", l.path, err)
	}
	if err := trust.CheckTrustedOpened(l.path, f); err != nil {
		f.Close()
		return nil, untrusted(err)
	}
	return f, nil
}

// Write appends e as one line: under an exclusive lock of the file, so
// the lines of concurrent sessions never interleave, it reads the last
// line back, and chains the new one to it with the next sequence number.
// A nil *Log writes nothing.
func (l *Log) Write(e Event) error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := l.append(e)
	if err != nil && l.failed == nil {
		l.failed = err
	}
	return err
}

func (l *Log) append(e Event) error {
	f, err := l.open()
	if err != nil {
		return err
	}
	defer f.Close()
	if err := flock(f); err != nil {
		return fserr.FromOS("audit_log: lock", l.path, err)
	}
	last, complete, err := lastLine(f)
	if err != nil {
		return err
	}
	ln := line{Seq: 1, Time: time.Now().UTC().Format(time.RFC3339Nano), Session: l.session, Event: e}
	if last != nil {
		ln.Prev = lineHash(last)
		var prev struct {
			Seq int64 `json:"seq"`
		}
		json.Unmarshal(last, &prev)
		ln.Seq = prev.Seq + 1
	}
	out, err := encode(ln)
	if err != nil {
		return fserr.Wrap(fserr.IO, "audit_log: "+err.Error(), err)
	}
	if !complete {
		// A line cut short (a crash mid-write) stays a line of its own,
		// which Verify reports.
		out = append([]byte{'\n'}, out...)
	}
	// One write of the whole line, under the lock.
	if _, err := f.Write(out); err != nil {
		return fserr.FromOS("audit_log: write", l.path, err)
	}
	return nil
}

// lockWait bounds the wait for the log's lock: another session holds it
// for one line's write, and a lock held longer (by a process outside
// any session) fails the write rather than stall the session.
const lockWait = 10 * time.Second

// encode is ln as one line: its JSON, then its own hash, then a line
// end.
func encode(ln line) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ln); err != nil {
		return nil, err
	}
	body := bytes.TrimSuffix(b.Bytes(), []byte("}\n"))
	sum := sha256.Sum256(body)
	out := append(bytes.Clone(body), hashKey...)
	out = append(out, hex.EncodeToString(sum[:])...)
	return append(out, "\"}\n"...), nil
}

// lineHash is the hash a line stands for in the next line's prev: the
// SHA-256 of its bytes before its own hash, or of all of it when it has
// none (a line Verify refuses anyway).
func lineHash(ln []byte) string {
	body, _, ok := splitHash(ln)
	if !ok {
		body = ln
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// splitHash cuts a line into the bytes its hash covers and the hash it
// says it has.
func splitHash(ln []byte) (body []byte, hash string, ok bool) {
	n := len(ln) - hashSuffixLen
	if n < 1 || !bytes.HasPrefix(ln[n:], []byte(hashKey)) || !bytes.HasSuffix(ln, []byte(`"}`)) {
		return nil, "", false
	}
	hash = string(ln[n+len(hashKey) : len(ln)-2])
	if _, err := hex.DecodeString(hash); err != nil {
		return nil, "", false
	}
	return ln[:n], hash, true
}

// lastLine reads the last line of f back (without its line end): nil in
// an empty file; complete says the file ends with a line end.
func lastLine(f *os.File) (last []byte, complete bool, err error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, false, fserr.FromOS("audit_log", f.Name(), err)
	}
	size := fi.Size()
	if size == 0 {
		return nil, true, nil
	}
	for chunk := int64(4096); ; chunk *= 4 {
		n := min(chunk, size)
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, size-n); err != nil && err != io.EOF {
			return nil, false, fserr.FromOS("audit_log: read", f.Name(), err)
		}
		complete = buf[len(buf)-1] == '\n'
		body := bytes.TrimSuffix(buf, []byte("\n"))
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
			return body[i+1:], complete, nil
		}
		if n == size {
			return body, complete, nil
		}
		if n > maxLine {
			return nil, false, fserr.New(fserr.IO, fmt.Sprintf("audit_log %s: its last line is longer than %d bytes", f.Name(), maxLine))
		}
	}
}
