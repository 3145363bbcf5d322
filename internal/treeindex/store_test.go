//go:build unix

package treeindex

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"
	"time"
)

func newStore(t testing.TB) *Store {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	must(t, os.Mkdir(dir, 0o700))
	s, err := OpenStore(dir)
	must(t, err)
	return s
}

func TestStoreRoundTrip(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, "a/b/", "a/f", "l -> a", "c/.env")
	s := newStore(t)
	ix := Scan(root, nil)
	ix.UseNotes("key")
	a, _ := ix.Folder("a")
	ix.SetNote(a, "noted")
	s.Sync(ix)
	got := s.Load(root)
	if got == nil {
		t.Fatal("the saved index does not load")
	}
	if ga, _ := got.Folder("a"); ga.Note() != "noted" || !got.UseNotes("key") {
		t.Errorf("note %q under key %q, want \"noted\" under \"key\"", ga.Note(), got.noteKey)
	}
	for _, f := range got.folders {
		f.Entries() // decoded when asked for
	}
	got.Stats = ix.Stats
	if !reflect.DeepEqual(got, ix) {
		t.Errorf("loaded %+v\nwant %+v", got, ix)
	}
	name, _ := fileName(root)
	fi, err := os.Stat(filepath.Join(s.dir, name))
	must(t, err)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("index file mode %04o, want 0600", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(s.dir); len(entries) != 1 {
		t.Errorf("the store holds %d files, want 1 (no temporary left)", len(entries))
	}
}

// An index loaded stays whole when a later save replaces its file: Load
// maps the file, and a save renames a new one over it, never writing the
// old in place.
func TestLoadedIndexOutlivesItsFile(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, "a/one", "b/two")
	settle()
	s := newStore(t)
	update(s, root)
	loaded := s.Load(root)
	if loaded == nil {
		t.Fatal("the index saved was not loaded")
	}
	mkTree(t, root, "a/three")
	settle()
	if ix := update(s, root); len(names(ix, "a")) != 2 {
		t.Fatalf("the new index's a holds %q, want two names", names(ix, "a"))
	}
	if got := names(loaded, "a"); len(got) != 1 || got[0] != "one" {
		t.Errorf("the index loaded before the save now says a holds %q, want [one]", got)
	}
	if got := names(loaded, "b"); len(got) != 1 || got[0] != "two" {
		t.Errorf("the index loaded before the save now says b holds %q, want [two]", got)
	}
}

// An index file that is not the store's own is ignored, and the next
// Update replaces it: one whose entries say a folder is empty must not
// hide what it holds.
func TestStoreIgnoresPlantedFiles(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, "zz/.env")
	settle()
	s := newStore(t)
	update(s, root)
	name, _ := fileName(root)
	path := filepath.Join(s.dir, name)
	// A forged index: zz holds nothing, with zz's real ctime.
	forged := Scan(root, nil)
	f, _ := forged.Folder("zz")
	f.setEntries(nil, nil)
	forgedData := encode(forged)
	cases := []struct {
		name  string
		plant func(t *testing.T)
	}{
		{"garbage", func(t *testing.T) { must(t, os.WriteFile(path, []byte("garbage\n"), 0o600)) }},
		{"truncated", func(t *testing.T) { must(t, os.WriteFile(path, forgedData[:len(forgedData)-9], 0o600)) }},
		{"bad checksum", func(t *testing.T) {
			bad := append([]byte(nil), forgedData...)
			bad[len(bad)-1] ^= 1
			must(t, os.WriteFile(path, bad, 0o600))
		}},
		{"mode 0644", func(t *testing.T) {
			must(t, os.WriteFile(path, forgedData, 0o600))
			must(t, os.Chmod(path, 0o644))
		}},
		{"mode 0666", func(t *testing.T) {
			must(t, os.WriteFile(path, forgedData, 0o600))
			must(t, os.Chmod(path, 0o666))
		}},
		{"symlink", func(t *testing.T) {
			other := filepath.Join(t.TempDir(), "x")
			must(t, os.WriteFile(other, forgedData, 0o600))
			must(t, os.Symlink(other, path))
		}},
		{"hard link", func(t *testing.T) {
			must(t, os.WriteFile(path, forgedData, 0o600))
			must(t, os.Link(path, filepath.Join(t.TempDir(), "y")))
		}},
		{"other owner", func(t *testing.T) {
			if os.Geteuid() != 0 {
				t.Skip("changing a file's owner needs root")
			}
			must(t, os.WriteFile(path, forgedData, 0o600))
			must(t, os.Chown(path, 4242, 4242))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(path)
			tc.plant(t)
			if s.Load(root) != nil {
				t.Fatal("a planted index file was loaded")
			}
			ix := update(s, root)
			if got := names(ix, "zz"); len(got) != 1 || got[0] != ".env" {
				t.Errorf("after a planted index file zz holds %q, want [.env]", got)
			}
			if s.Load(root) == nil {
				t.Error("the planted file was not replaced by a valid index")
			}
		})
	}
	// Control: the forged file written as the store writes it is loaded,
	// so the cases above fail for what they plant, not for its content.
	os.Remove(path)
	must(t, os.WriteFile(path, forgedData, 0o600))
	if s.Load(root) == nil {
		t.Error("control: a well-formed index file is not loaded")
	}
}

func TestOpenStoreRefusesUnsafeFolders(t *testing.T) {
	base := t.TempDir()
	for _, tc := range []struct {
		name string
		make func(p string)
	}{
		{"mode 0755", func(p string) { must(t, os.Mkdir(p, 0o700)); must(t, os.Chmod(p, 0o755)) }},
		{"mode 0777", func(p string) { must(t, os.Mkdir(p, 0o700)); must(t, os.Chmod(p, 0o777)) }},
		{"symlink", func(p string) { must(t, os.Mkdir(p+"-real", 0o700)); must(t, os.Symlink(p+"-real", p)) }},
		{"file", func(p string) { must(t, os.WriteFile(p, nil, 0o600)) }},
		{"other owner", func(p string) {
			if os.Geteuid() != 0 {
				t.Skip("changing a folder's owner needs root")
			}
			must(t, os.Mkdir(p, 0o700))
			must(t, os.Chown(p, 4242, 4242))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(base, tc.name)
			tc.make(p)
			if _, err := OpenStore(p); err == nil {
				t.Errorf("OpenStore accepted a folder with %s", tc.name)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	root := f.TempDir()
	mkTree(f, root, "a/b/", "a/f", "l -> a")
	f.Add(encode(Scan(root, nil)))
	f.Add([]byte(magic + "\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := decode(data)
		if err != nil {
			return
		}
		for _, fo := range ix.folders {
			for _, e := range fo.Entries() {
				if !validName(e.Name) || e.Kind >= kindCount {
					t.Fatalf("decoded an invalid entry %q kind %d", e.Name, e.Kind)
				}
			}
		}
	})
}

// benchTree makes n files in folders of 100 under a fresh root.
func benchTree(b *testing.B, n int) string {
	root := b.TempDir()
	for i := range n {
		d := filepath.Join(root, "d"+strconv.Itoa(i/100))
		if i%100 == 0 {
			must(b, os.Mkdir(d, 0o755))
		}
		must(b, os.WriteFile(filepath.Join(d, "f"+strconv.Itoa(i)), nil, 0o644))
	}
	return root
}

func BenchmarkDecode50000(b *testing.B) {
	data := encode(Scan(benchTree(b, 50000), nil))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdateWarm50000(b *testing.B) {
	root := benchTree(b, 50000)
	settle()
	s := newStore(b)
	update(s, root)
	for b.Loop() {
		update(s, root)
	}
}

func BenchmarkScanCold50000(b *testing.B) {
	root := benchTree(b, 50000)
	for b.Loop() {
		Scan(root, nil)
	}
}

// A note stays with its folder while the folder is unchanged, goes when
// the folder is read again, and every note goes when the key changes.
func TestNotesFollowTheirFolders(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, "a/x", "b/y", "c/")
	settle()
	s := newStore(t)
	ix := Scan(root, nil)
	ix.UseNotes("k1")
	for _, rel := range []string{"a", "b", "c"} {
		f, _ := ix.Folder(rel)
		ix.SetNote(f, "note of "+rel)
	}
	s.Sync(ix)
	mkTree(t, root, "a/new")
	next := Scan(root, s.Load(root))
	if !next.UseNotes("k1") {
		t.Fatal("the notes' key was not kept")
	}
	for rel, want := range map[string]string{"a": "", "b": "note of b", "c": "note of c"} {
		if f, _ := next.Folder(rel); f.Note() != want {
			t.Errorf("%s: note %q, want %q", rel, f.Note(), want)
		}
	}
	if next.UseNotes("k2") {
		t.Error("UseNotes took another key for the same")
	}
	for _, rel := range []string{"a", "b", "c"} {
		if f, _ := next.Folder(rel); f.Note() != "" {
			t.Errorf("%s: note %q under another key", rel, f.Note())
		}
	}
	if !next.Changed() {
		t.Error("dropping the notes did not change the index")
	}
}

// Entries that pass the file's checksum but not their layout make their
// folder Unreadable, never empty; Each says they did not decode.
func TestEntriesBadLayoutUnreadable(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, "a/x", "a/y/")
	ix := Scan(root, nil)
	f, _ := ix.Folder("a")
	for _, raw := range []string{"\x01x\x02\x05", "\x01y\x01\x05\x01x\x02\x05", "\x01x\x09\x05\x01y\x01\x05", "\x01x\x02\x05\x01z\x01\x05"} {
		g := &Folder{Dirs: f.Dirs, raw: raw, count: 2}
		if g.Each(func(string, Kind) {}) || g.Unreadable {
			t.Errorf("raw %q: Each says all decoded, or changed the folder", raw)
		}
		if es := g.Entries(); es != nil || !g.Unreadable {
			t.Errorf("raw %q: entries %v, unreadable %v; want none, unreadable", raw, es, g.Unreadable)
		}
	}
	good := &Folder{Dirs: f.Dirs, raw: string(encodeEntries(f.Entries())), count: 2}
	var each []string
	if !good.Each(func(name string, _ Kind) { each = append(each, name) }) || !reflect.DeepEqual(each, []string{"x", "y"}) {
		t.Errorf("good raw: Each gave %q", each)
	}
	if es := good.Entries(); !reflect.DeepEqual(es, f.Entries()) || good.Unreadable {
		t.Errorf("good raw: entries %v, unreadable %v", es, good.Unreadable)
	}
}

// The store keeps at most its max index files (storeMax): a save that adds one
// removes those used longest ago, where a Load counts as a use (an
// unchanged index is never saved again), and the temporary files a
// killed save left an hour ago. Without the bound, every folder ever a
// workspace left a file behind.
func TestStoreKeepsTheIndexesUsedLast(t *testing.T) {
	s := newStore(t)
	s.max = 3
	var roots []string
	for i := range 4 {
		root := t.TempDir()
		mkTree(t, root, "a/")
		roots = append(roots, root)
		if i < 3 {
			must(t, s.Save(Scan(root, nil)))
			name, _ := fileName(root)
			old := time.Now().Add(time.Duration(i-10) * time.Minute) // roots[0] the oldest
			must(t, os.Chtimes(filepath.Join(s.dir, name), old, old))
		}
	}
	leftover := filepath.Join(s.dir, ".tmp-tree-0123-456")
	must(t, os.WriteFile(leftover, nil, 0o600))
	old := time.Now().Add(-2 * staleTemp)
	must(t, os.Chtimes(leftover, old, old))
	if s.Load(roots[0]) == nil { // used now: kept
		t.Fatal("the index does not load")
	}
	must(t, s.Save(Scan(roots[3], nil)))
	for i, want := range []bool{true, false, true, true} {
		if got := s.Load(roots[i]) != nil; got != want {
			t.Errorf("root %d kept %t, want %t (0 used last, 1 the one used longest ago)", i, got, want)
		}
	}
	if _, err := os.Stat(leftover); err == nil {
		t.Error("a temporary file of a save two hours old is still there")
	}
	if entries, _ := os.ReadDir(s.dir); len(entries) != s.max {
		t.Errorf("the store holds %d files, want %d", len(entries), s.max)
	}
}

// update loads root's index from s (nil: none kept), scans root against
// it (Scan), saves the result when it changed (Sync), and returns it. A
// store that cannot be written costs the next scan its reads, never its
// correctness.
func update(s *Store, root string) *Index {
	ix := Scan(root, s.Load(root))
	s.Sync(ix)
	return ix
}

// TestDecodeRefusesWatchedBeyondItsNames: a folder that says it holds a
// watched name its index does not watch, or a file of the format before
// the watched names, does not decode: the index is read again whole.
func TestDecodeRefusesWatchedBeyondItsNames(t *testing.T) {
	root := t.TempDir()
	mkTree(t, root, "a/b")
	ix := Scan(root, nil, "b")
	if _, err := decode(encode(ix)); err != nil {
		t.Fatalf("control: %v", err)
	}
	a, _ := ix.Folder("a")
	a.held = 0b10
	if _, err := decode(encode(ix)); err == nil {
		t.Error("a folder holding a second watched name of an index watching one decoded")
	}
	a.held = 0b1
	data := encode(ix)
	data[len(magic)] = 2
	body := data[:len(data)-4]
	binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(body, castagnoli()))
	if _, err := decode(data); err == nil {
		t.Error("an index of version 2 decoded")
	}
}
