// Package memo is what a session remembers of the contents its reads
// returned, by their SHA-256, so that a later write, edit or patch whose
// --if-match went stale can show what changed since the read
// (docs/design.md §5, FS_STALE). It is bounded per content and in total,
// forgets the oldest first, and keeps everything in memory, never on
// disk. Mechanism only: it knows no files, paths or policy.
package memo

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
)

// The bounds of a session's memory: ItemMax bytes of one content (a
// larger one is not kept), TotalMax bytes in all.
const (
	ItemMax  = 256 << 10
	TotalMax = 8 << 20
)

// Store is one session's memory. The zero value is not usable; New
// makes one. It is safe for concurrent use.
type Store struct {
	mu        sync.Mutex
	item, max int64
	used      int64
	order     *list.List // of *entry, oldest at the front
	byHash    map[string]*list.Element
}

type entry struct {
	sum     string
	content []byte
}

// New returns an empty Store that keeps contents of at most item bytes,
// and at most max bytes in all.
func New(item, max int64) *Store {
	return &Store{item: item, max: max, order: list.New(), byHash: map[string]*list.Element{}}
}

// Remember keeps a copy of content under the SHA-256 it computes itself,
// so no caller can file content under a hash it does not have; the
// oldest contents are forgotten until the total fits. Content over the
// per-content bound is not kept.
func (s *Store) Remember(content []byte) {
	if int64(len(content)) > s.item || int64(len(content)) > s.max {
		return
	}
	h := sha256.Sum256(content)
	sum := hex.EncodeToString(h[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byHash[sum]; ok {
		s.order.MoveToBack(el)
		return
	}
	for s.used+int64(len(content)) > s.max {
		s.forget(s.order.Front())
	}
	s.byHash[sum] = s.order.PushBack(&entry{sum: sum, content: append([]byte{}, content...)})
	s.used += int64(len(content))
}

// Recall returns the content whose SHA-256 is sum (hex, any case), or
// nil when it is not remembered. The caller must not change it.
func (s *Store) Recall(sum string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byHash[strings.ToLower(sum)]
	if !ok {
		return nil
	}
	s.order.MoveToBack(el)
	return el.Value.(*entry).content
}

// Used is the number of bytes remembered.
func (s *Store) Used() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used
}

func (s *Store) forget(el *list.Element) {
	e := s.order.Remove(el).(*entry)
	delete(s.byHash, e.sum)
	s.used -= int64(len(e.content))
}
