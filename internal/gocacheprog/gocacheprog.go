//go:build unix

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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// hashSize is the size of an action or output ID (cmd/go/internal/cache).
const hashSize = 32

// entrySize is the size of an action entry file: "v1 <action> <output>
// <size> <time>\n", the numbers right-aligned in 20 columns.
const entrySize = 2 + 1 + 2*hashSize + 1 + 2*hashSize + 1 + 20 + 1 + 20 + 1

// maxEINTR bounds the retries of a call the kernel interrupted.
const maxEINTR = 100

// cache is a build cache folder in the go command's layout: an entry
// of action A is dir/AA/A-a ("AA" A's first byte), its output O's body
// dir/OO/O-d (a folder holding one file for an executable). The folder
// is opened once, and each of its 256 subfolders once, on first use:
// every file after that is opened, read, checked and written relative
// to those descriptors, never looked up from / again.
type cache struct {
	dir  string // absolute, as the go command named it
	fd   int    // dir
	mode uint32 // of the files it writes
	sub  [256]atomic.Int32
	seq  atomic.Uint64 // names the temporary files of puts

	staleMu sync.Mutex
	stale   []int // subfolders' descriptors replaced, closed by close
}

// openCache opens the cache folder dir, which must be an absolute path;
// a folder that is missing is made.
func openCache(dir string) (*cache, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("the build cache %q is not an absolute path", dir)
	}
	// The go command's own cache files are 0666 less the umask.
	mask := unix.Umask(0)
	unix.Umask(mask)
	c := &cache{dir: filepath.Clean(dir), mode: 0o666 &^ uint32(mask)}
	fd, err := openDir(unix.AT_FDCWD, c.dir)
	if errors.Is(err, unix.ENOENT) {
		if err = os.MkdirAll(c.dir, 0o777); err == nil {
			fd, err = openDir(unix.AT_FDCWD, c.dir)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the build cache %s: %w", c.dir, err)
	}
	c.fd = fd
	return c, nil
}

// openDir opens the folder name of at, following symlinks as the go
// command does, to read and to open files in.
func openDir(at int, name string) (int, error) {
	for range maxEINTR {
		fd, err := unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
	return -1, unix.EINTR
}

// close closes the descriptors.
func (c *cache) close() {
	for i := range c.sub {
		if fd := c.sub[i].Swap(0); fd > 0 {
			unix.Close(int(fd) - 1)
		}
	}
	for _, fd := range c.stale {
		unix.Close(fd)
	}
	unix.Close(c.fd)
}

// subdir is the descriptor of the subfolder of IDs starting with b,
// opened on first use (and made, when mk); -1 where it is not there.
func (c *cache) subdir(b byte, mk bool) int {
	if fd := c.sub[b].Load(); fd > 0 {
		return int(fd) - 1
	}
	name := fmt.Sprintf("%02x", b)
	fd, err := openDir(c.fd, name)
	if errors.Is(err, unix.ENOENT) && mk {
		if err = unix.Mkdirat(c.fd, name, 0o777); err == nil || errors.Is(err, unix.EEXIST) {
			fd, err = openDir(c.fd, name)
		}
	}
	if err != nil {
		return -1
	}
	if !c.sub[b].CompareAndSwap(0, int32(fd)+1) {
		// Another request opened it first.
		unix.Close(fd)
		return int(c.sub[b].Load()) - 1
	}
	return fd
}

// name is the file name of id's entry (kind "a") or body (kind "d") in
// its subfolder.
func name(id []byte, kind byte) string {
	var b [2*hashSize + 2]byte
	hex.Encode(b[:], id)
	b[2*hashSize], b[2*hashSize+1] = '-', kind
	return string(b[:])
}

// path is the absolute path of name in the subfolder of IDs starting
// with b.
func (c *cache) path(b byte, name string) string {
	return c.dir + "/" + fmt.Sprintf("%02x", b) + "/" + name
}

// get answers the entry of action id: a miss where there is none, or
// where it or its body is not what the go command would accept.
func (c *cache) get(id []byte) response {
	miss := response{Miss: true}
	if len(id) != hashSize {
		return miss
	}
	var data [entrySize + 1]byte
	n, err := c.read(id[0], name(id, 'a'), data[:])
	if err != nil || n != entrySize || data[entrySize-1] != '\n' {
		return miss
	}
	f := strings.Fields(string(data[:n]))
	if len(f) != 5 || f[0] != "v1" || f[1] != hex.EncodeToString(id) {
		return miss
	}
	out, err1 := hex.DecodeString(f[2])
	size, err2 := strconv.ParseInt(f[3], 10, 64)
	ns, err3 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || len(out) != hashSize || size < 0 || ns < 0 {
		return miss
	}
	path, ok := c.body(out, size)
	if !ok {
		return miss
	}
	t := time.Unix(0, ns)
	return response{OutputID: out, Size: size, Time: &t, DiskPath: path}
}

// read reads at most len(buf) bytes of the file name in the subfolder
// of IDs starting with b.
func (c *cache) read(b byte, name string, buf []byte) (int, error) {
	sub := c.subdir(b, false)
	if sub < 0 {
		return 0, unix.ENOENT
	}
	fd, err := -1, error(unix.EINTR)
	for i := 0; i < maxEINTR && err == unix.EINTR; i++ {
		fd, err = unix.Openat(sub, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	n := 0
	for i := 0; n < len(buf) && i < maxEINTR; {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			i++
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, nil
		}
		n += m
	}
	return n, nil
}

// body is the absolute path of output out's body where it is a regular
// file of size bytes (or a folder holding one, for an executable).
func (c *cache) body(out []byte, size int64) (string, bool) {
	sub := c.subdir(out[0], false)
	if sub < 0 {
		return "", false
	}
	n := name(out, 'd')
	var st unix.Stat_t
	if err := unix.Fstatat(sub, n, &st, 0); err != nil {
		return "", false
	}
	path := c.path(out[0], n)
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		// An executable: the folder holds it alone.
		names, err := os.ReadDir(path)
		if err != nil || len(names) != 1 {
			return "", false
		}
		path = filepath.Join(path, names[0].Name())
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() != size {
			return "", false
		}
		return path, true
	}
	return path, st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == size
}

// put writes the entry of action id, whose output out has body: the
// body's file where it is missing (or not this body's size), then the
// entry, each as a whole new file renamed into place.
func (c *cache) put(id, out, body []byte) response {
	if len(id) != hashSize || len(out) != hashSize {
		return response{Err: "an action or output ID of the wrong size"}
	}
	if sum := sha256.Sum256(body); string(sum[:]) != string(out) {
		return response{Err: "the output ID is not the body's hash"}
	}
	n := name(out, 'd')
	var st unix.Stat_t
	sub := c.subdir(out[0], false)
	if sub < 0 || unix.Fstatat(sub, n, &st, 0) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != int64(len(body)) {
		if err := c.writeIn(out[0], n, body); err != nil {
			return response{Err: err.Error()}
		}
	}
	entry := fmt.Sprintf("v1 %x %x %20d %20d\n", id, out, len(body), time.Now().UnixNano())
	if err := c.writeIn(id[0], name(id, 'a'), []byte(entry)); err != nil {
		return response{Err: err.Error()}
	}
	return response{DiskPath: c.path(out[0], n)}
}

// writeIn writes data as the file name of the subfolder of IDs starting
// with b, made where it is missing; a subfolder removed since it was
// opened (go clean -cache) is opened again, once.
func (c *cache) writeIn(b byte, name string, data []byte) error {
	for i := 0; ; i++ {
		sub := c.subdir(b, true)
		if sub < 0 {
			return fmt.Errorf("the build cache's folder %s/%02x cannot be opened", c.dir, b)
		}
		err := c.writeNew(sub, name, data)
		if i > 0 || !errors.Is(err, unix.ENOENT) {
			return err
		}
		if c.sub[b].CompareAndSwap(int32(sub)+1, 0) {
			// Another request may be using it: closed at the end.
			c.staleMu.Lock()
			c.stale = append(c.stale, sub)
			c.staleMu.Unlock()
		}
	}
}

// writeNew writes data as the file name of the folder dir, by a new
// file beside it renamed over it: a reader sees the old file or the
// new, whole.
func (c *cache) writeNew(dir int, name string, data []byte) error {
	var tmp string
	fd, err := -1, error(unix.EEXIST)
	for i := 0; i < maxEINTR && (err == unix.EEXIST || err == unix.EINTR); i++ {
		tmp = ".tmp-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(c.seq.Add(1), 10)
		fd, err = unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, c.mode)
	}
	if err != nil {
		return fmt.Errorf("a new file in the build cache: %w", err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Fchmodat(dir, tmp, c.mode, 0)
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return fmt.Errorf("%s in the build cache: %w", name, err)
	}
	return nil
}
