package memo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func sumOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestStore(t *testing.T) {
	a, b, c := []byte("aaaa"), []byte("bbbb"), []byte("cccc")
	for _, tc := range []struct {
		name      string
		item, max int64
		remember  [][]byte
		recall    [][]byte // what must be there
		forgotten [][]byte // what must not
		wantUsed  int64
	}{
		{"kept", 10, 100, [][]byte{a, b}, [][]byte{a, b}, nil, 8},
		{"over the item bound", 3, 100, [][]byte{a}, nil, [][]byte{a}, 0},
		{"oldest forgotten first", 10, 8, [][]byte{a, b, c}, [][]byte{b, c}, [][]byte{a}, 8},
		{"a recalled content is the newest", 10, 8, [][]byte{a, b, a, c}, [][]byte{a, c}, [][]byte{b}, 8},
		{"the same content once", 10, 100, [][]byte{a, a, a}, [][]byte{a}, nil, 4},
		{"empty content", 10, 100, [][]byte{{}}, [][]byte{{}}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.item, tc.max)
			for _, r := range tc.remember {
				s.Remember(r)
			}
			for _, r := range tc.recall {
				if got := s.Recall(strings.ToUpper(sumOf(r))); got == nil || !bytes.Equal(got, r) {
					t.Errorf("Recall(%q's hash) = %q", r, got)
				}
			}
			for _, r := range tc.forgotten {
				if got := s.Recall(sumOf(r)); got != nil {
					t.Errorf("Recall(%q's hash) = %q, want nothing", r, got)
				}
			}
			if s.Used() != tc.wantUsed {
				t.Errorf("Used() = %d, want %d", s.Used(), tc.wantUsed)
			}
		})
	}
}

// TestStoreCopies: what the store keeps is its own copy, so a caller
// that reuses its buffer changes nothing remembered.
func TestStoreCopies(t *testing.T) {
	s := New(10, 100)
	buf := []byte("abcd")
	s.Remember(buf)
	copy(buf, "zzzz")
	if got := s.Recall(sumOf([]byte("abcd"))); string(got) != "abcd" {
		t.Errorf("Recall = %q, want abcd", got)
	}
}
