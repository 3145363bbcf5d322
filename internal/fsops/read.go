package fsops

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/text"
)

// ReadOptions choose the window of a read.
type ReadOptions struct {
	// Offset is the first line, counted from 1 as editors count; 0 is 1.
	Offset int
	// Limit is the most lines returned: 1 or more.
	Limit int
	// MaxBytes is the most bytes of content returned, 1 or more; a single
	// line longer than that is cut at a character boundary.
	MaxBytes int
	// Keep, when above 0, keeps the whole file's bytes in ReadResult.Kept
	// when it has at most Keep of them: what a session remembers of its
	// reads, for the diff of a later stale --if-match.
	Keep int64
}

// ReadResult is a window of a text file.
type ReadResult struct {
	Content string `json:"content"`
	// StartLine and EndLine are the window's first and last line, both
	// 0 when it holds none.
	StartLine  int `json:"start_line"`
	EndLine    int `json:"end_line"`
	TotalLines int `json:"total_lines"`
	// Truncated says the file goes on after EndLine, or that the line
	// CutLine was cut at the byte budget.
	Truncated bool `json:"truncated"`
	// NextOffset is the Offset that continues the read; 0 at the end.
	NextOffset int `json:"next_offset,omitempty"`
	// CutLine is the line whose end was cut off because it alone was
	// longer than the byte budget.
	CutLine int `json:"cut_line,omitempty"`
	// PastEnd says Offset names a line after the file's last one: the
	// window is empty and there is nothing more to read.
	PastEnd bool  `json:"past_end,omitempty"`
	Size    int64 `json:"size"`
	// Kept is the whole file's bytes, whose SHA-256 is SHA256, when
	// ReadOptions.Keep asked for them and the file is no larger; never
	// part of the result a caller is shown.
	Kept        []byte `json:"-"`
	SHA256      string `json:"sha256"`
	Encoding    string `json:"encoding"`
	LineEndings string `json:"line_endings"`
}

// readChunk is how much of the file is read at a time.
const readChunk = 256 << 10

// Read returns a window of the text file t, as UTF-8 whatever the file's
// encoding (text.Encoding). The whole file is read once, in constant
// memory besides the window, to give its SHA-256, its line count, its
// encoding and its line endings; a file that turns out not to be UTF-8 is
// read a second time, decoded, for the window, and must still hash the
// same. Binary content (a NUL byte outside UTF-16, or UTF-16 that does not
// decode) is refused with FS_BINARY. A BOM is kept out of the content and
// reported as the encoding.
func Read(f *sandbox.Fence, t sandbox.Target, opt ReadOptions) (*ReadResult, error) {
	if opt.Offset < 0 {
		return nil, fserr.New(fserr.InvalidArgument, "read: --offset must be 1 or more")
	}
	if opt.Limit < 1 {
		return nil, fserr.New(fserr.InvalidArgument, "read: --limit must be 1 or more")
	}
	if opt.MaxBytes < 1 {
		return nil, fserr.New(fserr.InvalidArgument, "read: the byte budget (read_max_bytes) must be 1 or more")
	}
	file, err := OpenForRead(f, "read", t)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if opt.Offset == 0 {
		opt.Offset = 1
	}
	binary := func() error {
		e := fserr.New(fserr.Binary, "read: "+t.Given+": binary content")
		e.Hint = "read --raw streams the bytes unchanged"
		return e
	}
	w := &window{opt: opt, line: 1}
	h := sha256.New()
	var size int64
	var sniff text.Sniffer
	pooled := readBuffer()
	defer putReadBuffer(pooled)
	buf := *pooled
	first, plain := true, true
	var kept []byte
	keep := opt.Keep > 0
	for {
		n, err := io.ReadFull(file, buf)
		chunk := buf[:n]
		h.Write(chunk)
		size += int64(n)
		if keep = keep && size <= opt.Keep; keep {
			kept = append(kept, chunk...)
		}
		if !sniff.Feed(chunk) {
			return nil, binary()
		}
		if first {
			first = false
			switch {
			case text.HasBOM(chunk):
				chunk = chunk[len(text.BOM):]
			case text.HasUTF16BOM(chunk):
				plain = false // the second pass decodes it
			}
		}
		if plain {
			w.feed(chunk)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fserr.FromOS("read", t.Given, err)
		}
	}
	enc, bin := sniff.Result()
	if bin {
		return nil, binary()
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if !enc.IsUTF8() {
		if w, err = readDecoded(file, t.Given, enc, size, sum, opt); err != nil {
			return nil, err
		}
	}
	res := w.finish()
	res.Size, res.SHA256 = size, sum
	res.Encoding, res.LineEndings = enc.String(), w.endings.String()
	if keep {
		res.Kept = append([]byte{}, kept...)
	}
	return res, nil
}

// readDecoded reads file again from its start, decoded from enc, into a
// new window. The bytes it decodes must be the size bytes whose SHA-256
// was sum: a file changed between the two passes is FS_IO, never a
// window of one content with the hash of another.
func readDecoded(file *os.File, given string, enc text.Encoding, size int64, sum string, opt ReadOptions) (*window, error) {
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return nil, fserr.FromOS("read", given, err)
	}
	h := sha256.New()
	raw := &countingReader{r: io.TeeReader(io.LimitReader(file, size), h)}
	dec := enc.NewReader(raw)
	w := &window{opt: opt, line: 1}
	pooled := readBuffer()
	defer putReadBuffer(pooled)
	buf := *pooled
	for {
		n, err := io.ReadFull(dec, buf)
		w.feed(buf[:n])
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fserr.FromOS("read", given, err)
		}
	}
	if raw.n != size || hex.EncodeToString(h.Sum(nil)) != sum {
		return nil, fserr.New(fserr.IO, "read: "+given+": the file changed while it was read")
	}
	return w, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// OpenForRead opens t for reading through the fence, which decides on
// what it opened, and refuses anything but a regular file (regularFile).
func OpenForRead(f *sandbox.Fence, op string, t sandbox.Target) (*os.File, error) {
	file, err := f.OpenRead(op, t)
	if err != nil {
		return nil, err
	}
	return regularFile(file, op, t)
}

// openCurrent is OpenForRead for the current content of a mutation's target
// (a dry run, a preview): the write fence decides where that may be, not
// the read confinement of dsh-fs mcp (sandbox.Fence.OpenCurrent).
func openCurrent(f *sandbox.Fence, op string, t sandbox.Target) (*os.File, error) {
	file, err := f.OpenCurrent(op, t)
	if err != nil {
		return nil, err
	}
	return regularFile(file, op, t)
}

// regularFile passes on file if it is a regular file, and closes and
// refuses anything else: a folder is FS_IS_DIR, and a FIFO or a device,
// which could block or never end, is FS_INVALID_ARGUMENT.
func regularFile(file *os.File, op string, t sandbox.Target) (*os.File, error) {
	fi, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, fserr.FromOS(op, t.Given, err)
	}
	switch {
	case fi.IsDir():
		file.Close()
		e := fserr.New(fserr.IsDir, op+": "+t.Given+": is a folder")
		e.Hint = "use ls to list a folder"
		return nil, e
	case !fi.Mode().IsRegular():
		file.Close()
		return nil, fserr.New(fserr.InvalidArgument, op+": "+t.Given+": not a regular file")
	}
	return file, nil
}

// OpenSource opens a file a command reads its input from (write --from,
// edit --edits): a read like any other, so deny_read applies, and only a
// regular file will do.
func OpenSource(f *sandbox.Fence, op, path string) (*os.File, error) {
	t, err := f.Resolve(path)
	if err != nil {
		return nil, err
	}
	return OpenForRead(f, op, t)
}

// window collects the lines of a read window from the chunks of a file's
// text, UTF-8 without a BOM, and counts the lines and line breaks of the
// whole text on the way.
type window struct {
	opt     ReadOptions
	endings text.EndingCounter
	size    int64 // bytes of text seen
	lastNL  bool  // the text's last byte so far is '\n'

	line    int    // the line the next byte belongs to
	content []byte // the complete lines taken, then the current one
	partial int    // where the current line starts in content
	taken   int    // complete lines in content
	done    bool   // the window is closed: only counting goes on
	cut     bool   // the one line taken was cut at the byte budget
}

func (w *window) feed(chunk []byte) {
	if len(chunk) == 0 {
		return
	}
	w.size += int64(len(chunk))
	w.endings.Feed(chunk)
	w.lastNL = chunk[len(chunk)-1] == '\n'
	for len(chunk) > 0 && !w.done {
		i := bytes.IndexByte(chunk, '\n')
		if w.line < w.opt.Offset {
			if i < 0 {
				return
			}
			w.line++
			chunk = chunk[i+1:]
			continue
		}
		if w.taken >= w.opt.Limit {
			w.done = true
			return
		}
		part := chunk
		if i >= 0 {
			part = chunk[:i+1]
		}
		if len(w.content)+len(part) > w.opt.MaxBytes {
			if w.taken == 0 {
				// One line longer than the whole budget: cut it, or the
				// read could never get past it.
				w.content = text.TrimToRune(append(w.content, part[:w.opt.MaxBytes-len(w.content)]...))
				w.cut = true
				w.taken = 1
			} else {
				// The line does not fit whole: it opens the next window.
				w.content = w.content[:w.partial]
			}
			w.done = true
			return
		}
		w.content = append(w.content, part...)
		chunk = chunk[len(part):]
		if i >= 0 {
			w.taken++
			w.line++
			w.partial = len(w.content)
		}
	}
}

// finish closes the window at the end of the file.
func (w *window) finish() *ReadResult {
	if !w.done && w.partial < len(w.content) {
		w.taken++ // a last line without a final newline
	}
	total := w.endings.LF()
	if w.size > 0 && !w.lastNL {
		total++
	}
	res := &ReadResult{
		Content:    string(w.content),
		StartLine:  w.opt.Offset,
		EndLine:    w.opt.Offset + w.taken - 1,
		TotalLines: total,
		PastEnd:    w.opt.Offset > 1 && w.opt.Offset > total,
	}
	if w.cut {
		res.CutLine = res.StartLine
	}
	if res.EndLine < total {
		res.NextOffset = res.EndLine + 1
	}
	if w.taken == 0 {
		// No line in the window (past the end, or an empty file): no
		// line numbers either, rather than an end before the start.
		res.StartLine, res.EndLine = 0, 0
	}
	res.Truncated = w.cut || res.NextOffset != 0
	return res
}

// ReadRaw streams the bytes of t to w unchanged, in constant memory: the
// stream read. Only the deny_read check and the folder check apply; binary
// content is what it is for.
func ReadRaw(f *sandbox.Fence, t sandbox.Target, w io.Writer) (int64, error) {
	file, err := OpenForRead(f, "read", t)
	if err != nil {
		return 0, err
	}
	defer file.Close()
	var n int64
	if out, ok := w.(*os.File); ok {
		// sendfile moves the bytes inside the kernel, to a pipe, a file or
		// a socket alike (io.Copy would fall back to 32 KiB chunks for a
		// pipe). Where it cannot, the copy below goes on from where it
		// stopped.
		for {
			m, err := sendFile(int(out.Fd()), int(file.Fd()), 1<<30)
			n += int64(max(m, 0))
			if err == fsys.EINTR {
				continue
			}
			if err != nil || m == 0 {
				if err == nil {
					return n, nil
				}
				break
			}
		}
	}
	// The structs hide the shortcuts that would ignore the buffer.
	buf := copyBuffer()
	defer putCopyBuffer(buf)
	m, err := io.CopyBuffer(struct{ io.Writer }{w}, struct{ io.Reader }{file}, *buf)
	if err != nil {
		return n + m, fserr.FromOS("read", t.Given, err)
	}
	return n + m, nil
}
