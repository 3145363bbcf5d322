//go:build unix

package fsops

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// streamSize spans several copy chunks and more than one writeback chunk,
// and ends inside a chunk.
const streamSize = writebackChunk + copyBufferSize + copyBufferSize/3

func randomContent(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{7})
	r.Read(b)
	return b
}

// streamAndHash runs streamTo into a fresh file with its tail hash, as a
// write does, and returns what the file holds and what was hashed.
func streamAndHash(t *testing.T, src io.Reader) (n int64, onDisk []byte, hashed string, basis []byte) {
	t.Helper()
	dst, err := os.OpenFile(filepath.Join(t.TempDir(), "dst"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	h := sha256.New()
	kept := &capped{limit: 1 << 40}
	tail := startTailHash(dst, h, kept)
	n, err = streamTo(dst, src, "dst", tail)
	if err != nil {
		tail.abort()
		t.Fatalf("streamTo: %v", err)
	}
	if err := tail.finish(); err != nil {
		t.Fatalf("tail hash: %v", err)
	}
	onDisk, err = os.ReadFile(dst.Name())
	if err != nil {
		t.Fatal(err)
	}
	return n, onDisk, hexSum(h), kept.buf.Bytes()
}

func TestStreamToCopiesAndHashesEveryByte(t *testing.T) {
	content := randomContent(t, streamSize)
	want := sumHex(content)
	srcPath := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(srcPath, content, 0o644); err != nil {
		t.Fatal(err)
	}
	sources := map[string]func(t *testing.T) io.Reader{
		// copy_file_range
		"regular file": func(t *testing.T) io.Reader {
			f, err := os.Open(srcPath)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f
		},
		// copy_file_range refuses (EXDEV): read and write
		"file on another file system": func(t *testing.T) io.Reader {
			shm := "/dev/shm"
			if !otherFileSystem(shm, srcPath) {
				t.Skipf("%s is missing or on the same file system as %s", shm, srcPath)
			}
			f, err := os.CreateTemp(shm, "dsh-fs-stream-test-")
			if err != nil {
				t.Skip(err)
			}
			t.Cleanup(func() { f.Close(); os.Remove(f.Name()) })
			if _, err := f.Write(content); err != nil {
				t.Fatal(err)
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			return f
		},
		// read and write, in chunks ReadFull fills
		"plain reader": func(t *testing.T) io.Reader { return struct{ io.Reader }{bytes.NewReader(content)} },
		// read and write, with short reads
		"pipe": func(t *testing.T) io.Reader {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				w.Write(content)
				w.Close()
			}()
			t.Cleanup(func() { r.Close() })
			return r
		},
	}
	for name, source := range sources {
		t.Run(name, func(t *testing.T) {
			n, onDisk, hashed, basis := streamAndHash(t, source(t))
			if n != int64(len(content)) || !bytes.Equal(onDisk, content) {
				t.Fatalf("wrote %d bytes (%d on disk), want the %d bytes of the source", n, len(onDisk), len(content))
			}
			if hashed != want {
				t.Errorf("hash %s, want %s", hashed, want)
			}
			if !bytes.Equal(basis, content) {
				t.Errorf("the diff basis holds %d bytes, not the content", len(basis))
			}
		})
	}
}

// otherFileSystem reports whether a and b both exist on different devices.
func otherFileSystem(a, b string) bool {
	var sa, sb unix.Stat_t
	return unix.Stat(a, &sa) == nil && unix.Stat(b, &sb) == nil && sa.Dev != sb.Dev
}

func TestStreamToStartsAtTheSourceOffset(t *testing.T) {
	content := randomContent(t, 3*copyBufferSize)
	srcPath := filepath.Join(t.TempDir(), "src")
	if err := os.WriteFile(srcPath, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const consumed = 12345
	if _, err := f.Seek(consumed, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	_, onDisk, hashed, _ := streamAndHash(t, f)
	if !bytes.Equal(onDisk, content[consumed:]) || hashed != sumHex(content[consumed:]) {
		t.Fatalf("wrote %d bytes, want the %d after the offset", len(onDisk), len(content)-consumed)
	}
}

func TestStreamToReportsTheSourcesFailure(t *testing.T) {
	dir := t.TempDir()
	dst, err := os.OpenFile(filepath.Join(dir, "dst"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	folder, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	tail := startTailHash(dst, sha256.New(), &capped{})
	_, err = streamTo(dst, folder, "dst", tail)
	tail.abort()
	if e := fsErr(t, err); e.Code() != fserr.IsDir || e.Msg != "write: reading the content: dst: is a directory" {
		t.Fatalf("got %s %q, want FS_IS_DIR for reading the content", e.Code(), e.Msg)
	}
}

// The tail hash reads back what the writer says it wrote; a file that
// lost some of it is an error, not a short hash.
func TestTailHashRefusesBytesTheFileDoesNotHave(t *testing.T) {
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("12345"); err != nil {
		t.Fatal(err)
	}
	tail := startTailHash(f, sha256.New(), &capped{})
	tail.advance(10)
	if err := tail.finish(); !errors.Is(err, io.EOF) {
		t.Fatalf("finish: %v, want EOF", err)
	}
}

// Work that trails the copy (the hashes) can still refuse the write: its
// failure comes before the rename, so the old file stays and no temp file
// is left, and a failure before it is reached still waits for it.
func TestReplaceSettleRunsBeforeTheRename(t *testing.T) {
	for _, failAt := range []string{"settle", "fill"} {
		t.Run(failAt, func(t *testing.T) {
			f, dir := editFence(t)
			path := filepath.Join(dir, "f.txt")
			if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			target, err := f.Resolve(path)
			if err != nil {
				t.Fatal(err)
			}
			l, err := lockTarget(f, "write", &target, sandbox.Intent{})
			if err != nil {
				t.Fatal(err)
			}
			refused := errors.New("refused")
			err = l.replace(func(tmp *os.File) (func() error, error) {
				if _, err := tmp.WriteString("new\n"); err != nil {
					return nil, err
				}
				if failAt == "fill" {
					return nil, refused
				}
				return func() error { return refused }, nil
			})
			l.Close()
			if err != refused {
				t.Fatalf("replace: %v, want the failure of %s", err, failAt)
			}
			if got, _ := os.ReadFile(path); string(got) != "old\n" {
				t.Errorf("the file holds %q, want the old content", got)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("the folder holds %d entries, want only f.txt", len(entries))
			}
		})
	}
}
