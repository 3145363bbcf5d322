package search

import (
	"slices"
	"strings"
)

// automaton is an Aho-Corasick automaton over bytes, completed into a
// DFA: one table lookup per byte of the text, whatever the number of
// literals. Bytes are mapped to classes first (each byte a literal holds
// has its own, every other byte one shared), so the table has a row of
// as many entries as the literals have distinct bytes, not 256.
type automaton struct {
	class  [256]uint8
	nclass int
	// delta is the next state of each state (a row of nclass entries,
	// premultiplied: state k is k*nclass) and class; negative when that
	// state ends a literal (-next).
	delta []int32
	// fold matches ASCII letters in either case and, as Go's regexp folds
	// them, the Kelvin sign (U+212A) as k and the long s (U+017F) as s.
	fold bool
	// kelvin, longS are the classes of k and s, when fold and a literal
	// holds one; -1 otherwise.
	kelvin, longS int
	// outs are, for an exact automaton (newExactAutomaton), the literals
	// (their index, ascending) that end in each state; lens their
	// lengths, at most maxExactLen.
	outs [][]int32
	lens []int
}

// maxExactLen bounds the literals of an exact automaton: their starts
// are kept in a ring of this many.
const maxExactLen = 64

// newExactAutomaton is newAutomaton that also knows which literals end
// in each state, so that it finds the leftmost-first match itself
// (automaton.leftmost); nil when a literal is longer than maxExactLen.
func newExactAutomaton(lits []string, fold bool) *automaton {
	for _, l := range lits {
		if len(l) > maxExactLen {
			return nil
		}
	}
	return buildAutomaton(lits, fold, true)
}

// newAutomaton builds the automaton of lits (none empty), folding ASCII
// case with fold, or returns nil past maxACStates states.
func newAutomaton(lits []string, fold bool) *automaton {
	return buildAutomaton(lits, fold, false)
}

func buildAutomaton(lits []string, fold, exact bool) *automaton {
	a := &automaton{fold: fold, kelvin: -1, longS: -1}
	if fold {
		for i, l := range lits {
			lits[i] = strings.ToLower(l)
		}
	}
	var used [256]bool
	for _, l := range lits {
		for i := 0; i < len(l); i++ {
			used[l[i]] = true
		}
	}
	a.nclass = 1
	for c := range 256 {
		if used[c] {
			a.class[c] = uint8(a.nclass)
			a.nclass++
		}
	}
	if fold {
		for c := 'A'; c <= 'Z'; c++ {
			a.class[c] = a.class[c+'a'-'A']
		}
		if used['k'] {
			a.kelvin = int(a.class['k'])
		}
		if used['s'] {
			a.longS = int(a.class['s'])
		}
	}
	n := a.nclass
	// The trie: goto edges, -1 where there is none; end marks a state
	// where a literal ends.
	trie := make([]int32, n)
	for i := range trie {
		trie[i] = -1
	}
	end := []bool{false}
	var outs [][]int32
	if exact {
		outs = [][]int32{nil}
		a.lens = make([]int, len(lits))
	}
	for k, l := range lits {
		s := 0
		for i := 0; i < len(l); i++ {
			c := int(a.class[l[i]])
			if trie[s*n+c] < 0 {
				if len(end) >= maxACStates {
					return nil
				}
				trie[s*n+c] = int32(len(end))
				end = append(end, false)
				if exact {
					outs = append(outs, nil)
				}
				for range n {
					trie = append(trie, -1)
				}
			}
			s = int(trie[s*n+c])
		}
		end[s] = true
		if exact {
			outs[s] = append(outs[s], int32(k))
			a.lens[k] = len(l)
		}
	}
	complete(trie, end, outs, n)
	a.delta = make([]int32, len(trie))
	for i, t := range trie {
		v := t * int32(n)
		if end[t] {
			v = -v
		}
		a.delta[i] = v
	}
	a.outs = outs
	return a
}

// next returns the index of the last byte of the first literal found in
// b from off on (the literal ends there), or -1.
func (a *automaton) next(b []byte, off int) int {
	s := 0
	delta, class := a.delta, &a.class
	special := a.kelvin >= 0 || a.longS >= 0
	for i := off; i < len(b); i++ {
		c := int(class[b[i]])
		if special && (b[i] == 0xE2 || b[i] == 0xC5) {
			c, i = a.folded(b, i, c)
		}
		v := delta[s+c]
		if v < 0 {
			return i
		}
		s = int(v)
	}
	return -1
}

// complete turns the trie (n entries a state, -1 where no edge) into the
// DFA, breadth first: each state's failure (the longest proper suffix of
// its path that is a path too) is decided before its children's, a
// missing edge takes the failure's, and a state ends whatever its
// failure ends (outs, when not nil, the literals too).
func complete(trie []int32, end []bool, outs [][]int32, n int) {
	exact := outs != nil
	fail := make([]int32, len(end))
	queue := make([]int32, 0, len(end))
	for c := range n {
		if t := trie[c]; t < 0 {
			trie[c] = 0
		} else {
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := int(queue[0])
		queue = queue[1:]
		f := int(fail[s])
		for c := range n {
			t := trie[s*n+c]
			if t < 0 {
				trie[s*n+c] = trie[f*n+c]
				continue
			}
			fail[t] = trie[f*n+c]
			end[t] = end[t] || end[fail[t]]
			if exact && len(outs[fail[t]]) > 0 {
				outs[t] = append(outs[t], outs[fail[t]]...)
				slices.Sort(outs[t])
			}
			queue = append(queue, t)
		}
	}
}

// leftmost returns the leftmost-first match in b of an exact automaton,
// as Go's regexp finds it for the alternation of its literals in their
// order: the match that starts first, and of those that start there the
// literal first in order; -1, -1 when there is none. A literal matched
// through the fold of the Kelvin sign or the long s spans their bytes.
func (a *automaton) leftmost(b []byte) (int, int) {
	var ring [maxExactLen]int // the byte where each of the last symbols starts
	best, bestEnd, bestSym, bestLit := -1, -1, 0, int32(0)
	s, k, n := 0, 0, a.nclass
	delta, class := a.delta, &a.class
	special := a.kelvin >= 0 || a.longS >= 0
	for i := 0; i < len(b); i, k = i+1, k+1 {
		if best >= 0 && k-bestSym >= maxExactLen {
			break // every literal that starts at best has ended
		}
		ring[k%maxExactLen] = i
		c := int(class[b[i]])
		if special && (b[i] == 0xE2 || b[i] == 0xC5) {
			c, i = a.folded(b, i, c)
		}
		v := delta[s+c]
		if v >= 0 {
			s = int(v)
			continue
		}
		s = int(-v)
		for _, lit := range a.outs[s/n] {
			sym := k - a.lens[lit] + 1
			start := ring[sym%maxExactLen]
			if best < 0 || start < best || start == best && lit < bestLit {
				best, bestEnd, bestSym, bestLit = start, i+1, sym, lit
			}
		}
	}
	return best, bestEnd
}

// folded is the symbol of the byte b[i] of class c where it starts the
// Kelvin sign or the long s, which -i folds as k and s: their symbol and
// the index of their last byte; otherwise c and i as they are.
func (a *automaton) folded(b []byte, i, c int) (int, int) {
	switch {
	case a.kelvin >= 0 && b[i] == 0xE2 && i+2 < len(b) && b[i+1] == 0x84 && b[i+2] == 0xAA:
		return a.kelvin, i + 2
	case a.longS >= 0 && b[i] == 0xC5 && i+1 < len(b) && b[i+1] == 0xBF:
		return a.longS, i + 1
	}
	return c, i
}
