package treeindex

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"sync"
	"unsafe"
)

// The file's layout, every number a uvarint but the ctime's seconds (a
// varint) and the checksum: magic "dshtidx" and the version byte; root
// (length, bytes), its dev and ino, the note key, the watched names
// (count, each a string), folders, entries; per folder its rel path, dev,
// ino, ctime sec and nsec, flags, the watched names it holds (a byte),
// its folders' names, its note, its entries (count, length, encoding);
// per entry name, kind byte, ino; the CRC-32C of all before it, 4 bytes
// little-endian. A
// folder's entries stay encoded until asked for (Folder.Entries), so a
// load costs a few allocations a folder and none an entry.
const (
	magic   = "dshtidx"
	version = 3
)

const (
	flagUnreadable = 1 << iota
	flagRacy
	flagSymlinks
)

// castagnoli is the checksum's table, made at the first index read or
// written: made at package init, it cost every dsh-fs process (the file
// tool's calls, exec's child) about 0.2 ms of its start.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

var errFormat = errors.New("not a tree index of this version")

// encode returns ix in the file's layout.
func encode(ix *Index) []byte {
	b := make([]byte, 0, 64+len(ix.folders)*64+ix.entries*24)
	b = append(b, magic...)
	b = append(b, version)
	b = appendString(b, ix.root)
	b = binary.AppendUvarint(b, ix.rootDev)
	b = binary.AppendUvarint(b, ix.rootIno)
	b = appendString(b, ix.noteKey)
	b = binary.AppendUvarint(b, uint64(len(ix.watch)))
	for _, w := range ix.watch {
		b = appendString(b, w)
	}
	entries := 0
	for _, f := range ix.folders {
		entries += f.count
	}
	b = binary.AppendUvarint(b, uint64(len(ix.folders)))
	b = binary.AppendUvarint(b, uint64(entries))
	for rel, f := range ix.folders {
		b = appendString(b, rel)
		b = binary.AppendUvarint(b, f.Dev)
		b = binary.AppendUvarint(b, f.Ino)
		b = binary.AppendVarint(b, f.CtimeSec)
		b = binary.AppendUvarint(b, uint64(f.CtimeNsec))
		var flags byte
		if f.Unreadable {
			flags |= flagUnreadable
		}
		if f.Racy {
			flags |= flagRacy
		}
		if f.symlinks {
			flags |= flagSymlinks
		}
		b = append(b, flags, f.held)
		b = binary.AppendUvarint(b, uint64(len(f.Dirs)))
		for _, d := range f.Dirs {
			b = appendString(b, d)
		}
		b = appendString(b, f.note)
		b = binary.AppendUvarint(b, uint64(f.count))
		raw := f.raw
		if raw == "" {
			raw = string(encodeEntries(f.entries))
		}
		b = appendString(b, raw)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

func encodeEntries(entries []Entry) []byte {
	var b []byte
	for _, e := range entries {
		b = appendString(b, e.Name)
		b = append(b, byte(e.Kind))
		b = binary.AppendUvarint(b, e.Ino)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// decoder reads the file's layout from s; the first error sticks.
type decoder struct {
	s   string
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	var v uint64
	for i := 0; i < len(d.s) && i < binary.MaxVarintLen64; i++ {
		c := d.s[i]
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			d.s = d.s[i+1:]
			return v
		}
	}
	d.err = errFormat
	return 0
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.s) == 0 {
		d.err = errFormat
		return 0
	}
	c := d.s[0]
	d.s = d.s[1:]
	return c
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.s)) {
		d.err = errFormat
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

// decode reads an index from data, which it keeps: the caller never
// changes data afterwards. It checks its checksum, its version
// and every name of a folder's Dirs: a name is never empty, ".", ".." or
// holds a slash or a NUL, so no entry leads outside its folder. A
// folder's entries are checked when decoded (decodeEntries).
func decode(data []byte) (*Index, error) {
	if len(data) < len(magic)+1+4 {
		return nil, errFormat
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli()) != sum || string(body[:len(magic)]) != magic || body[len(magic)] != version {
		return nil, errFormat
	}
	// The names and encoded entries are substrings of data itself, not
	// of a copy (a load's one buffer, hundreds of kilobytes at 50,000
	// entries): data is the decoded index's from here on.
	d := &decoder{s: unsafe.String(&body[len(magic)+1], len(body)-len(magic)-1)}
	ix := &Index{root: d.string(), rootDev: d.uvarint(), rootIno: d.uvarint(), noteKey: d.string()}
	nw := d.uvarint()
	if d.err != nil || nw > maxWatched {
		return nil, errFormat
	}
	for range nw {
		if w := d.string(); validName(w) {
			ix.watch = append(ix.watch, w)
		} else {
			return nil, errFormat
		}
	}
	nf, ne := d.uvarint(), d.uvarint()
	if d.err != nil || nf > uint64(len(d.s)) || ne > uint64(len(d.s)) {
		return nil, errFormat
	}
	ix.folders = make(map[string]*Folder, nf)
	folders := make([]Folder, nf)
	for i := range folders {
		f := &folders[i]
		rel := d.string()
		f.Dev, f.Ino = d.uvarint(), d.uvarint()
		f.CtimeSec, f.CtimeNsec = d.varint(), int64(d.uvarint())
		flags, held := d.byte(), d.byte()
		f.Unreadable, f.Racy, f.symlinks = flags&flagUnreadable != 0, flags&flagRacy != 0, flags&flagSymlinks != 0
		if held>>len(ix.watch) != 0 {
			return nil, errFormat
		}
		f.held = held
		nd := d.uvarint()
		if d.err != nil || nd > uint64(len(d.s)) {
			return nil, errFormat
		}
		if nd > 0 {
			f.Dirs = make([]string, nd)
		}
		for j := range f.Dirs {
			if f.Dirs[j] = d.string(); !validName(f.Dirs[j]) {
				return nil, errFormat
			}
		}
		f.note = d.string()
		n := d.uvarint()
		f.raw = d.string()
		if d.err != nil || n > ne || uint64(len(f.raw)) < 3*n || n < nd || (n == 0) != (f.raw == "") {
			return nil, errFormat
		}
		f.count = int(n)
		ix.folders[rel] = f
		ix.entries += f.count
	}
	if d.err != nil || len(d.s) != 0 || uint64(ix.entries) != ne {
		return nil, errFormat
	}
	return ix, nil
}

// decodeEntries decodes the n entries of raw, checking every name and
// kind, that they are sorted, and that the folders among them are dirs.
func decodeEntries(raw string, n int, dirs []string) ([]Entry, error) {
	entries := make([]Entry, 0, n)
	if err := eachEntry(raw, n, dirs, func(e Entry) { entries = append(entries, e) }); err != nil {
		return nil, err
	}
	return entries, nil
}

// eachEntry calls fn with each of the n entries of raw as decodeEntries
// checks them, and stops at the first that fails (errFormat); the names
// are raw's own bytes, nothing is copied.
func eachEntry(raw string, n int, dirs []string, fn func(Entry)) error {
	d := decoder{s: raw}
	nd := 0
	prev := ""
	for j := 0; j < n; j++ {
		var e Entry
		e.Name, e.Kind, e.Ino = d.string(), Kind(d.byte()), d.uvarint()
		if d.err != nil || e.Kind >= kindCount || !validName(e.Name) || j > 0 && prev >= e.Name {
			return errFormat
		}
		if e.Kind == KindDir {
			if nd >= len(dirs) || dirs[nd] != e.Name {
				return errFormat
			}
			nd++
		}
		prev = e.Name
		fn(e)
	}
	if d.err != nil || len(d.s) != 0 || nd != len(dirs) {
		return errFormat
	}
	return nil
}

func validName(name string) bool {
	if name == "" || name == "." || name == ".." {
		return false
	}
	// A byte loop: strings.ContainsAny costs more than the rest of an
	// entry's decoding.
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '/' || c == 0 {
			return false
		}
	}
	return true
}
