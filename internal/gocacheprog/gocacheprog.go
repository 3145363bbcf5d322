// Package gocacheprog is the Go build cache of a dsh-fs exec session
// seen through its copy-on-write overlay at the speed of the disk
// (docs/design.md §10, "Toolchain caches"). The go command marks each
// cache entry it uses with a new mtime, at most once an hour; under the
// overlay, every such mark copies the whole entry up into the session's
// private layer, so a build that rebuilds nothing pays for copying a
// good part of the person's cache. Serve speaks Go's GOCACHEPROG
// protocol (cmd/go/internal/cacheprog) over a cache folder in the go
// command's own layout: it answers a get with the path of the entry's
// file as it is, never touching it, and writes a put's entry as new
// files, which the overlay keeps in the session's own layer. It never
// changes, removes or marks a file that is there.
package gocacheprog

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The protocol's commands this program knows.
const (
	cmdGet   = "get"
	cmdPut   = "put"
	cmdClose = "close"
)

// request is the go command's message (cacheprog.Request).
type request struct {
	ID       int64
	Command  string
	ActionID []byte `json:",omitempty"`
	OutputID []byte `json:",omitempty"`
	BodySize int64  `json:",omitempty"`
}

// response is the answer (cacheprog.Response).
type response struct {
	ID            int64
	Err           string     `json:",omitempty"`
	KnownCommands []string   `json:",omitempty"`
	Miss          bool       `json:",omitempty"`
	OutputID      []byte     `json:",omitempty"`
	Size          int64      `json:",omitempty"`
	Time          *time.Time `json:",omitempty"`
	DiskPath      string     `json:",omitempty"`
}

// hashSize is the size of an action or output ID (cmd/go/internal/cache).
const hashSize = 32

// entrySize is the size of an action entry file: "v1 <action> <output>
// <size> <time>\n", the numbers right-aligned in 20 columns.
const entrySize = 2 + 1 + 2*hashSize + 1 + 2*hashSize + 1 + 20 + 1 + 20 + 1

// Serve answers the go command's requests read from in on out, for the
// cache folder dir (absolute), until it asks to close or in ends.
func Serve(in io.Reader, out io.Writer, dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("the build cache %q is not an absolute path", dir)
	}
	// The go command's own cache files are 0666 less the umask.
	mask := unix.Umask(0)
	unix.Umask(mask)
	c := cache{dir: dir, mode: 0o666 &^ os.FileMode(mask)}
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	send := func(r response) error {
		if err := enc.Encode(r); err != nil {
			return err
		}
		return w.Flush()
	}
	if err := send(response{KnownCommands: []string{cmdGet, cmdPut, cmdClose}}); err != nil {
		return err
	}
	dec := json.NewDecoder(bufio.NewReaderSize(in, 64<<10))
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		var body []byte
		if req.Command == cmdPut && req.BodySize > 0 {
			// The body follows as a base64 JSON string.
			if err := dec.Decode(&body); err != nil {
				return fmt.Errorf("the body of request %d: %w", req.ID, err)
			}
			if int64(len(body)) != req.BodySize {
				return fmt.Errorf("the body of request %d: %d bytes, want %d", req.ID, len(body), req.BodySize)
			}
		}
		var res response
		switch req.Command {
		case cmdGet:
			res = c.get(req.ActionID)
		case cmdPut:
			res = c.put(req.ActionID, req.OutputID, body)
		case cmdClose:
			return send(response{ID: req.ID})
		default:
			res.Err = "unknown command " + strconv.Quote(req.Command)
		}
		res.ID = req.ID
		if err := send(res); err != nil {
			return err
		}
	}
}

// cache is a build cache folder in the go command's layout: an entry
// of action A is dir/AA/A-a ("AA" A's first byte), its output O's body
// dir/OO/O-d (a folder holding one file for an executable).
type cache struct {
	dir  string
	mode os.FileMode // of the files it writes
}

func (c cache) file(id []byte, kind string) string {
	return filepath.Join(c.dir, fmt.Sprintf("%02x", id[0]), fmt.Sprintf("%x", id)+"-"+kind)
}

// get answers the entry of action id: a miss where there is none, or
// where it or its body is not what the go command would accept.
func (c cache) get(id []byte) response {
	miss := response{Miss: true}
	if len(id) != hashSize {
		return miss
	}
	data, err := readAtMost(c.file(id, "a"), entrySize+1)
	if err != nil || len(data) != entrySize {
		return miss
	}
	f := strings.Fields(string(data))
	if len(f) != 5 || f[0] != "v1" || f[1] != hex.EncodeToString(id) || data[entrySize-1] != '\n' {
		return miss
	}
	out, err1 := hex.DecodeString(f[2])
	size, err2 := strconv.ParseInt(f[3], 10, 64)
	ns, err3 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(out) != hashSize || size < 0 || ns < 0 {
		return miss
	}
	path := c.file(out, "d")
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		// An executable: the folder holds it alone.
		var names []os.DirEntry
		if names, err = os.ReadDir(path); err == nil && len(names) == 1 {
			path = filepath.Join(path, names[0].Name())
			fi, err = os.Stat(path)
		} else if err == nil {
			err = errors.New("not one executable")
		}
	}
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
		return miss
	}
	t := time.Unix(0, ns)
	return response{OutputID: out, Size: size, Time: &t, DiskPath: path}
}

// put writes the entry of action id, whose output out has body: the
// body's file where it is missing (or not this body's size), then the
// entry, each as a whole new file renamed into place.
func (c cache) put(id, out, body []byte) response {
	if len(id) != hashSize || len(out) != hashSize {
		return response{Err: "an action or output ID of the wrong size"}
	}
	if sum := sha256.Sum256(body); string(sum[:]) != string(out) {
		return response{Err: "the output ID is not the body's hash"}
	}
	path := c.file(out, "d")
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(body)) {
		if err := writeNew(path, body, c.mode); err != nil {
			return response{Err: err.Error()}
		}
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", id, out, len(body), time.Now().UnixNano())
	if err := writeNew(c.file(id, "a"), []byte(entry), c.mode); err != nil {
		return response{Err: err.Error()}
	}
	return response{DiskPath: path}
}

// writeNew writes data as path, mode mode, by a new file in its folder
// renamed over it: a reader sees the old file or the new, whole.
func writeNew(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), mode)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// readAtMost reads at most n bytes of the file at path.
func readAtMost(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}
