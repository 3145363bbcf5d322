package fsops

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"strconv"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
	"github.com/dshfs/dsh-fs/pkg/text"
)

// ReadOptions choose the window of a read.
type ReadOptions struct {
	// Offset is the first line, counted from 1 as editors count; 0 is 1.
	Offset int
	// Limit is the most lines returned.
	Limit int
	// MaxBytes is the most bytes of content returned; a single line
	// longer than that is cut at a character boundary.
	MaxBytes int
}

// ReadResult is a window of a text file.
type ReadResult struct {
	Content    string `json:"content"`
	StartLine  int    `json:"start_line"`
	EndLine    int    `json:"end_line"`
	TotalLines int    `json:"total_lines"`
	// Truncated says the file goes on after EndLine, or that the line
	// CutLine was cut at the byte budget.
	Truncated bool `json:"truncated"`
	// NextOffset is the Offset that continues the read; 0 at the end.
	NextOffset int `json:"next_offset,omitempty"`
	// CutLine is the line whose end was cut off because it alone was
	// longer than the byte budget.
	CutLine     int    `json:"cut_line,omitempty"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"`
	Encoding    string `json:"encoding"`
	LineEndings string `json:"line_endings"`
}

// readChunk is how much of the file is read at a time.
const readChunk = 256 << 10

// Read returns a window of the text file t. The whole file is read once,
// in constant memory besides the window, to give its SHA-256 and line
// count. Binary content (text.IsBinary on the first block, or an invalid
// UTF-8 window) is refused with FS_BINARY. A UTF-8 BOM is kept out of the
// content and reported as the encoding.
func Read(f *sandbox.Fence, t sandbox.Target, opt ReadOptions) (*ReadResult, error) {
	file, err := openForRead(f, "read", t)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if opt.Offset < 0 || opt.Limit < 0 || opt.MaxBytes < 0 {
		return nil, fserr.New(fserr.InvalidArgument, "read: --offset and --limit must be zero or more")
	}
	if opt.Offset == 0 {
		opt.Offset = 1
	}
	w := &window{opt: opt, line: 1, h: sha256.New()}
	buf := make([]byte, readChunk)
	first := true
	var encoding, endings string
	for {
		n, err := io.ReadFull(file, buf)
		chunk := buf[:n]
		if first {
			first = false
			if text.IsBinary(chunk[:min(len(chunk), text.SniffLen)]) {
				e := fserr.New(fserr.Binary, "read: "+t.Given+": binary content")
				e.Hint = "read --raw streams the bytes unchanged"
				return nil, e
			}
			encoding, endings = text.Encoding(chunk), text.LineEndings(chunk)
			if text.HasBOM(chunk) && opt.Offset == 1 {
				w.skipBOM = true
			}
		}
		w.feed(chunk)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fserr.FromOS("read", t.Given, err)
		}
	}
	res, err := w.finish(t.Given)
	if err != nil {
		return nil, err
	}
	res.Encoding, res.LineEndings = encoding, endings
	return res, nil
}

// openForRead opens t for reading through the fence, which decides on
// what it opened, and refuses anything but a regular file: a folder is
// FS_IS_DIR, and a FIFO or a device, which could block or never end, is
// FS_INVALID_ARGUMENT.
func openForRead(f *sandbox.Fence, op string, t sandbox.Target) (*os.File, error) {
	file, err := f.OpenRead(op, t)
	if err != nil {
		return nil, err
	}
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
	return openForRead(f, op, t)
}

// window collects the lines of a read window from the chunks of a file,
// and hashes and counts the whole file on the way.
type window struct {
	opt     ReadOptions
	h       hash.Hash
	size    int64
	newline int  // '\n' bytes seen in the whole file
	lastNL  bool // the file's last byte so far is '\n'
	skipBOM bool

	line    int    // the line the next byte belongs to
	content []byte // the complete lines taken, then the current one
	partial int    // where the current line starts in content
	taken   int    // complete lines in content
	done    bool   // the window is closed: only hashing and counting go on
	cut     bool   // the one line taken was cut at the byte budget
}

func (w *window) feed(chunk []byte) {
	if len(chunk) == 0 {
		return
	}
	w.h.Write(chunk)
	w.size += int64(len(chunk))
	w.newline += bytes.Count(chunk, []byte{'\n'})
	w.lastNL = chunk[len(chunk)-1] == '\n'
	if w.skipBOM {
		w.skipBOM = false
		chunk = chunk[len(text.BOM):]
	}
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
				w.content = trimToRune(append(w.content, part[:w.opt.MaxBytes-len(w.content)]...))
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
func (w *window) finish(given string) (*ReadResult, error) {
	if !w.done && w.partial < len(w.content) {
		w.taken++ // a last line without a final newline
	}
	total := w.newline
	if w.size > 0 && !w.lastNL {
		total++
	}
	if !utf8.Valid(w.content) {
		e := fserr.New(fserr.Binary, "read: "+given+": not UTF-8 text in lines "+
			strconv.Itoa(w.opt.Offset)+"-"+strconv.Itoa(w.opt.Offset+w.taken-1))
		e.Hint = "read --raw streams the bytes unchanged"
		return nil, e
	}
	res := &ReadResult{
		Content:    string(w.content),
		StartLine:  w.opt.Offset,
		EndLine:    w.opt.Offset + w.taken - 1,
		TotalLines: total,
		Size:       w.size,
		SHA256:     hex.EncodeToString(w.h.Sum(nil)),
	}
	if w.cut {
		res.CutLine = res.StartLine
	}
	if res.EndLine < total {
		res.NextOffset = res.EndLine + 1
	}
	res.Truncated = w.cut || res.NextOffset != 0
	return res, nil
}

// trimToRune drops an incomplete UTF-8 sequence from the end of b, left
// there by a cut at a byte count.
func trimToRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// ReadRaw streams the bytes of t to w unchanged, in constant memory: the
// stream read. Only the deny_read check and the folder check apply; binary
// content is what it is for.
func ReadRaw(f *sandbox.Fence, t sandbox.Target, w io.Writer) (int64, error) {
	file, err := openForRead(f, "read", t)
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
			m, err := unix.Sendfile(int(out.Fd()), int(file.Fd()), nil, 1<<30)
			n += int64(max(m, 0))
			if err == unix.EINTR {
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
	m, err := io.CopyBuffer(struct{ io.Writer }{w}, struct{ io.Reader }{file}, make([]byte, 1<<20))
	if err != nil {
		return n + m, fserr.FromOS("read", t.Given, err)
	}
	return n + m, nil
}
