package fsops

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/text"
)

// WriteOptions shape a write.
type WriteOptions struct {
	// Content is the new content, read once, streamed to disk.
	Content io.Reader
	// Mkdir creates missing parent folders, each inside the fence.
	Mkdir bool
	// IfMatch, when set, is the SHA-256 (hex) the current content must
	// have; a missing file matches nothing.
	IfMatch string
	// Overwrite allows replacing an existing file unseen. Without it, or
	// IfMatch, an existing file is FS_EXISTS and nothing is written
	// (docs/design.md §5).
	Overwrite bool
	// DryRun computes the result and the diff without touching the disk.
	DryRun bool
	// Diff bounds the diff.
	Diff diff.Options
	// Encoding, when set, is the name of the encoding (text.Encoding) the
	// UTF-8 Content is written in, BOM included; empty writes Content's
	// bytes as they are.
	Encoding string
	// Recall, when set, gives back the content the caller read, for the
	// diff of a stale IfMatch (StaleDetail.Diff).
	Recall Recall
}

// WriteResult is the result of a write.
type WriteResult struct {
	Created bool   `json:"created"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	// PreviousSHA256 is the replaced file's hash, when the write read it:
	// with --if-match, or when it was small enough to be the diff basis.
	// Absent for a new file, and for a large file replaced without
	// --if-match, which is not read at all.
	PreviousSHA256 string `json:"previous_sha256,omitempty"`
	// HardlinkBroken says the old file had other hard links: they keep
	// the old content, since the new file replaced the name rather than
	// being written through.
	HardlinkBroken bool `json:"hardlink_broken,omitempty"`
	// Encoding is the encoding the content was written in, when the
	// caller asked for one.
	Encoding string      `json:"encoding,omitempty"`
	DryRun   bool        `json:"dry_run,omitempty"`
	Diff     diff.Result `json:"diff"`
}

// Write replaces the file t with opt.Content atomically, through the
// fence: a reader sees the old file or the new one, a failure leaves the
// old file as it was and no temp file behind (a process killed between
// link and rename leaves one staging file, see sandbox.Temp.Commit, which
// the next write of t removes). Writing through a symlink
// writes its target and keeps the link. The input is streamed; only the
// diff basis (at most opt.Diff.BasisMaxBytes of each side) is held. The
// old file is read only when --if-match or the diff needs it. A path
// under deny_read is denied, since the diff would show it.
func Write(f *sandbox.Fence, t sandbox.Target, opt WriteOptions) (*WriteResult, error) {
	if strings.HasSuffix(t.Given, "/") {
		return nil, fserr.New(fserr.IsDir, "write: "+t.Given+": names a folder")
	}
	if opt.IfMatch != "" && !isSHA256(opt.IfMatch) {
		return nil, fserr.New(fserr.InvalidArgument, "write: --if-match takes a SHA-256 in hex (64 characters)")
	}
	if err := encodeContent(&opt); err != nil {
		return nil, err
	}
	in := sandbox.Intent{Mkdir: opt.Mkdir, DryRun: opt.DryRun, Preview: func() (sandbox.Preview, error) { return previewWrite(f, t, &opt) }}
	h, err := f.Lock("write", &t, in)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return writeHeld(h, opt)
}

// writeHeld writes opt.Content over the file h holds (see Write), or, with
// opt.DryRun, computes the result without writing: the same checks, the
// same hashes, the same diff.
func writeHeld(h *sandbox.Held, opt WriteOptions) (*WriteResult, error) {
	if h.Exists() && !opt.mayReplace() {
		return nil, existsError(h.File, h.Given())
	}
	if opt.DryRun {
		return dryWrite(h, opt)
	}
	l := &locked{op: "write", Held: h}
	res := &WriteResult{Created: !l.Exists(), HardlinkBroken: l.Exists() && l.Stat.Nlink > 1, Encoding: opt.Encoding}
	basis := &capped{limit: opt.Diff.BasisMaxBytes}
	sum := sha256.New()
	var old oldContent
	err := l.replace(func(tmp *os.File) (func() error, error) {
		tail := startTailHash(tmp, sum, basis)
		n, err := streamTo(tmp, opt.Content, l.Given(), tail)
		res.Bytes = n
		if err != nil {
			tail.abort()
			return nil, err
		}
		// The old file is hashed, for previous_sha256 and --if-match, only
		// now: the copy and its writeback are the critical path and get a
		// core of their own beside the new content's hash, and the sync
		// that follows leaves both cores to the two hashes. The lock keeps
		// other dsh-fs writers out meanwhile, and a stale --if-match still
		// refuses before the rename, with the old file untouched.
		//
		// Only when something needs it: --if-match, or a diff basis. A
		// replace of a file larger than diff_basis_max_bytes without
		// --if-match does not read the old file at all, and reports no
		// previous_sha256 (docs/design.md §5).
		oldDone := make(chan error, 1)
		if l.Exists() && !needOld(opt, l.Stat.Size) {
			old = unreadOld()
			oldDone <- nil
		} else {
			go func() {
				var err error
				old, err = readOld(l.Held, opt.Diff.BasisMaxBytes)
				if err == nil {
					err = checkIfMatch("write", l.Given(), opt.IfMatch, old.sum, old.stale(opt))
				}
				oldDone <- err
			}()
		}
		return func() error {
			tailErr := tail.finish()
			oldErr := <-oldDone
			if tailErr != nil {
				return fserr.FromOS("write: reading back what was written", l.Given(), tailErr)
			}
			return oldErr
		}, nil
	})
	if err != nil {
		return nil, err
	}
	res.PreviousSHA256 = old.sum
	res.SHA256 = hex.EncodeToString(sum.Sum(nil))
	res.Diff = writeDiff(l.Given(), old, basis, opt.Diff)
	return res, nil
}

// dryWrite computes a write's result over the file h looks at, without a
// lock or a temp file.
func dryWrite(h *sandbox.Held, opt WriteOptions) (*WriteResult, error) {
	res := &WriteResult{DryRun: true, Encoding: opt.Encoding, Created: !h.Exists()}
	old := unreadOld()
	if !h.Exists() || needOld(opt, h.Stat.Size) {
		var err error
		if old, err = readOld(h, opt.Diff.BasisMaxBytes); err != nil {
			return nil, err
		}
	}
	res.PreviousSHA256 = old.sum
	if err := checkIfMatch("write", h.Given(), opt.IfMatch, old.sum, old.stale(opt)); err != nil {
		return nil, err
	}
	basis := &capped{limit: opt.Diff.BasisMaxBytes}
	sum := sha256.New()
	content := opt.Content
	if content == nil {
		content = bytes.NewReader(nil)
	}
	n, err := hashAndKeep(content, sum, basis)
	if err != nil {
		return nil, fserr.FromOS("write: reading the content", h.Given(), err)
	}
	res.Bytes = n
	res.SHA256 = hex.EncodeToString(sum.Sum(nil))
	res.Diff = writeDiff(h.Given(), old, basis, opt.Diff)
	return res, nil
}

// mayReplace reports whether the write may replace an existing file: the
// caller proved it saw the content (IfMatch, checked later) or asked to
// replace it unseen (Overwrite).
func (opt WriteOptions) mayReplace() bool { return opt.Overwrite || opt.IfMatch != "" }

// ExistsDetail is the detail of FS_EXISTS for a write that would replace a
// file unseen: what the file holds now, so the caller can read it or pass
// the hash as --if-match.
type ExistsDetail struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// existsError refuses to replace file, which the caller has not seen,
// with its current hash and size. Nothing is written.
func existsError(file *os.File, given string) error {
	h := sha256.New()
	// ReadAt from 0: the file's offset says nothing, and nothing else
	// reads it after this.
	size, err := io.Copy(h, io.NewSectionReader(file, 0, 1<<62))
	if err != nil {
		return fserr.FromOS("write", given, err)
	}
	e := fserr.New(fserr.Exists, "write: "+given+": the file exists; replacing it needs --if-match SHA256 or --overwrite")
	e.Detail = ExistsDetail{SHA256: hexSum(h), Size: size}
	e.Hint = "read the file and pass its sha256 as --if-match to replace what you read, or add --overwrite to replace it unseen; nothing was written"
	return e
}

// oldContent is what a mutation knows of the file it replaces.
type oldContent struct {
	exists bool
	sum    string // hex SHA-256; "" when the file did not exist or was not read
	basis  *capped
}

// stale is what a write refused as stale over old can show.
func (o oldContent) stale(opt WriteOptions) staleBasis {
	return staleBasis{now: o.basis.buf.Bytes(), held: o.exists && !o.basis.over, recall: opt.Recall, diff: opt.Diff}
}

// needOld reports whether a write of opt over a file of size bytes needs
// the old content: to compare it with --if-match, or as the diff basis.
func needOld(opt WriteOptions, size int64) bool {
	return opt.IfMatch != "" || size <= opt.Diff.BasisMaxBytes
}

// unreadOld is an existing file a write did not read: no hash, and a
// basis too large to diff.
func unreadOld() oldContent {
	return oldContent{exists: true, basis: &capped{over: true}}
}

// readOld hashes the file h holds and keeps it as diff basis when it is
// small enough; nothing when h holds no file.
func readOld(h *sandbox.Held, basisMax int64) (oldContent, error) {
	basis := &capped{limit: basisMax}
	if !h.Exists() {
		return oldContent{basis: basis}, nil
	}
	if h.Stat.Size <= basisMax {
		basis.buf.Grow(int(h.Stat.Size))
	}
	sum := sha256.New()
	if _, err := hashAndKeep(h.File, sum, basis); err != nil {
		return oldContent{}, fserr.FromOS("read", h.Given(), err)
	}
	return oldContent{exists: true, sum: hexSum(sum), basis: basis}, nil
}

// hashAndKeep reads r to its end into h and basis, in copyBufferSize
// chunks, and returns how many bytes it read.
func hashAndKeep(r io.Reader, h hash.Hash, basis *capped) (int64, error) {
	// The structs hide a file's WriteTo and the writer's ReadFrom, which
	// would copy in 32 KiB chunks and ignore the buffer.
	buf := copyBuffer()
	defer putCopyBuffer(buf)
	return io.CopyBuffer(struct{ io.Writer }{io.MultiWriter(h, basis)}, struct{ io.Reader }{r}, *buf)
}

func hexSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

func shortSum(s string) string {
	if s == "" {
		return "none: the file does not exist"
	}
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// writebackChunk is how much is written before its writeback is started.
const writebackChunk = 8 << 20

// copyBufferSize is large enough that a big write costs few system calls.
const copyBufferSize = 1 << 20

func writeDiff(name string, old oldContent, basis *capped, opt diff.Options) diff.Result {
	if old.basis.over || basis.over {
		return diff.Omitted(diff.ReasonBasisTooLarge)
	}
	if !old.exists {
		return diff.UnifiedCreated(name, diffText(basis.buf.Bytes()), opt)
	}
	return diff.Unified(name, diffText(old.basis.buf.Bytes()), diffText(basis.buf.Bytes()), opt)
}

// diffText is a side of a diff as the model reads it: a text file that is
// not UTF-8 (UTF-16, Windows-1252, Latin-1) decoded to UTF-8, anything
// else as it is.
func diffText(b []byte) []byte {
	if enc, binary := text.Detect(b); !binary && !enc.IsUTF8() {
		return enc.Decode(b)
	}
	return b
}

// encodeContent makes opt.Content the encoding of its UTF-8 text in
// opt.Encoding. A character the encoding cannot store is
// FS_INVALID_ARGUMENT, found as the content streams: the write then fails
// and leaves the old file as it was.
func encodeContent(opt *WriteOptions) error {
	if opt.Encoding == "" {
		return nil
	}
	enc, ok := text.ParseEncoding(opt.Encoding)
	if !ok {
		return fserr.New(fserr.InvalidArgument, "write: --encoding: unknown encoding "+strconv.Quote(opt.Encoding)+" (want "+strings.Join(text.Names(), ", ")+")")
	}
	if enc == text.UTF8 {
		return nil // the bytes as they are
	}
	content := opt.Content
	if content == nil {
		content = bytes.NewReader(nil)
	}
	opt.Content = &encodingReader{r: enc.NewEncoder(content)}
	return nil
}

// encodingReader turns a character the encoding cannot store into
// FS_INVALID_ARGUMENT.
type encodingReader struct{ r io.Reader }

func (e *encodingReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	var ue *text.UnencodableError
	if errors.As(err, &ue) {
		x := fserr.Wrap(fserr.InvalidArgument, fmt.Sprintf("write: the content has %q (%U), which %s cannot store", ue.Rune, ue.Rune, ue.Encoding), err)
		x.Hint = "use characters the encoding can store, or another --encoding; nothing was changed"
		return n, x
	}
	return n, err
}

// capped keeps what is written to it up to limit bytes and then only
// remembers that there was more, so a 10 GiB stream costs no more memory
// than the diff basis. A limit of zero keeps nothing: no diff.
type capped struct {
	limit int64
	buf   bytes.Buffer
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if c.over {
		return len(p), nil
	}
	if int64(c.buf.Len()+len(p)) > c.limit {
		c.over = true
		c.buf = bytes.Buffer{}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}
