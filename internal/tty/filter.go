package tty

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Filter is what the relay puts between the session's output and the
// person's terminal (docs/design.md §10, "The terminal is the person's").
// It tokenizes the output as a terminal does (text, C0 controls, ESC,
// CSI, OSC, DCS, APC, PM, SOS, 7- or 8-bit, split across reads or not)
// and passes only what a shell and an editor need to draw their screen,
// in one canonical 7-bit form; everything else is dropped whole, so a
// sequence nobody thought of never passes and the terminal never sees
// half of one. Two queries are answered by the relay itself (Replies).
// The zero Filter is ready; it is not safe for concurrent use.
type Filter struct {
	state  filterState
	seq    []byte // the sequence being read: ESC and what followed, bounded
	over   bool   // seq passed its bound: read to its end and drop it
	bel    bool   // the string being read ended with BEL, not ST
	utf    []byte // a UTF-8 character begun and not yet complete
	answer []byte // the relay's own answers, for Replies
	alt    string // the alternate screen mode the session is in, if any
}

type filterState uint8

const (
	stGround    filterState = iota
	stEsc                   // after ESC, reading intermediates
	stCSI                   // after ESC [
	stString                // inside OSC, DCS, APC, PM or SOS
	stStringEsc             // an ESC inside a string: ST, or the string ends
)

// Bounds on one sequence: a control sequence (the longest a shell or an
// editor writes is an SGR of a few dozen bytes) and a string (a title or
// an OSC 8 hyperlink with its URI). Past its bound, a sequence is read
// to its end without being kept, and dropped: a string never terminated
// holds no memory.
const (
	maxControl = 256
	maxString  = 8192
)

// The relay's own answers to the queries it answers.
const (
	// answerDA1 says "VT220 with ANSI colour": what the filter passes.
	answerDA1 = "\x1b[?62;22c"
	// answerDSR says "ready, no malfunction".
	answerDSR = "\x1b[0n"
)

// Write filters p, the next bytes of the session's output, and appends
// to dst what the person's terminal is to get. A sequence p ends in the
// middle of is kept until the next Write completes it.
func (f *Filter) Write(dst, p []byte) []byte {
	for i := 0; i < len(p); i++ {
		if f.state == stGround && len(f.utf) == 0 {
			// Text, the common case, in runs: printable ASCII and
			// the C0 controls passed, then whole UTF-8 characters.
			j := i
			for j < len(p) && plain[p[j]] {
				j++
			}
			for j < len(p) && p[j] >= 0x80 {
				r, n := utf8.DecodeRune(p[j:])
				if r < 0xa0 || r == utf8.RuneError && n == 1 {
					break
				}
				j += n
			}
			if j > i {
				dst = append(dst, p[i:j]...)
				i = j - 1
				continue
			}
		}
		b := p[i]
		if len(f.utf) == 0 && b < 0x80 {
			dst = f.ascii(dst, b)
			continue
		}
		dst = f.nonASCII(dst, b)
	}
	return dst
}

// Replies takes the answers the relay gives the session itself, to be
// put on the session's input.
func (f *Filter) Replies() []byte {
	a := f.answer
	f.answer = nil
	return a
}

// nonASCII reads a byte of a UTF-8 character, or one that is no part
// of one: a raw 8-bit C1 control (0x80-0x9f) acts as its ESC form, as
// does a C1 control written in UTF-8 (U+0080-U+009F), so that no
// terminal, whatever its encoding, reads a control the filter did not.
func (f *Filter) nonASCII(dst []byte, b byte) []byte {
	if len(f.utf) > 0 && (b < 0x80 || b > 0xbf) {
		// The character began is cut short: drop it, read b anew.
		f.utf = f.utf[:0]
		if b < 0x80 {
			return f.ascii(dst, b)
		}
	}
	if len(f.utf) == 0 {
		switch {
		case b >= 0x80 && b <= 0x9f:
			return f.c1(dst, b)
		case b >= 0xc2 && b <= 0xf4:
			f.utf = append(f.utf, b)
			return dst
		default:
			// Not UTF-8: a terminal shows U+FFFD or nothing.
			return dst
		}
	}
	f.utf = append(f.utf, b)
	if !utf8.FullRune(f.utf) {
		return dst
	}
	r, _ := utf8.DecodeRune(f.utf)
	defer func() { f.utf = f.utf[:0] }()
	switch {
	case r == utf8.RuneError:
		return dst
	case r >= 0x80 && r <= 0x9f:
		return f.c1(dst, byte(r))
	}
	return f.text(dst, f.utf)
}

// c1 reads the 8-bit control c as its 7-bit form, ESC and c-0x40.
func (f *Filter) c1(dst []byte, c byte) []byte {
	dst = f.ascii(dst, 0x1b)
	return f.ascii(dst, c-0x40)
}

// text reads a whole character that is not ASCII.
func (f *Filter) text(dst, ch []byte) []byte {
	switch f.state {
	case stGround:
		return append(dst, ch...)
	case stString:
		f.keep(ch, maxString)
		return dst
	case stStringEsc:
		// ESC and a character: the string ends unterminated.
		f.reset()
		return append(dst, ch...)
	}
	// Inside a control sequence: malformed.
	f.reset()
	return append(dst, ch...)
}

// passC0 are the C0 controls passed in text: BEL, BS, HT, LF, VT, FF,
// CR, SO and SI (the G1 and G0 character sets). ENQ (the answerback),
// NUL and the rest are dropped.
var passC0 = [0x20]bool{0x07: true, 0x08: true, 0x09: true, 0x0a: true, 0x0b: true, 0x0c: true, 0x0d: true, 0x0e: true, 0x0f: true}

// plain are the bytes passed as they are in text: printable ASCII and
// the C0 controls of passC0.
var plain = func() (t [256]bool) {
	for b := 0x20; b < 0x7f; b++ {
		t[b] = true
	}
	for b, ok := range passC0 {
		t[b] = ok
	}
	return t
}()

// ascii reads one 7-bit byte.
func (f *Filter) ascii(dst []byte, b byte) []byte {
	switch f.state {
	case stGround:
		switch {
		case b == 0x1b:
			f.begin(stEsc, b)
		case b < 0x20:
			if passC0[b] {
				dst = append(dst, b)
			}
		case b < 0x7f:
			dst = append(dst, b)
		}
		return dst
	case stEsc, stCSI:
		return f.control(dst, b)
	case stString:
		switch b {
		case 0x07:
			f.bel = true
			dst = f.endString(dst)
		case 0x1b:
			f.state = stStringEsc
		case 0x18, 0x1a:
			f.reset()
		default:
			f.keepByte(b, maxString)
		}
		return dst
	case stStringEsc:
		if b == '\\' {
			f.bel = false
			return f.endString(dst)
		}
		// ESC and anything but \ ends the string unterminated, and
		// the ESC begins a sequence of its own.
		f.reset()
		f.begin(stEsc, 0x1b)
		return f.ascii(dst, b)
	}
	return dst
}

// control reads a byte of an ESC or CSI sequence.
func (f *Filter) control(dst []byte, b byte) []byte {
	switch {
	case b == 0x1b:
		f.reset()
		f.begin(stEsc, b)
		return dst
	case b == 0x18 || b == 0x1a:
		// CAN and SUB cancel the sequence.
		f.reset()
		return dst
	case b < 0x20:
		// A control inside a sequence: a terminal would act on it and
		// go on; the filter drops the sequence and reads the control.
		f.reset()
		return f.ascii(dst, b)
	case b == 0x7f:
		return dst
	}
	if f.state == stCSI {
		f.keepByte(b, maxControl)
		if b >= 0x40 {
			return f.end(dst, classifyCSI)
		}
		return dst
	}
	// After ESC: intermediates, then a final byte.
	f.keepByte(b, maxControl)
	if b < 0x30 {
		return dst
	}
	if len(f.seq) == 2 {
		switch b {
		case '[':
			f.state = stCSI
			return dst
		case ']', 'P', '_', '^', 'X':
			f.state = stString
			return dst
		}
	}
	return f.end(dst, classifyEsc)
}

// begin starts a sequence in state s with its first byte.
func (f *Filter) begin(s filterState, b byte) {
	f.state, f.over = s, false
	f.seq = append(f.seq[:0], b)
}

// keep adds b to the sequence being read, up to limit bytes.
func (f *Filter) keep(b []byte, limit int) {
	if f.over || len(f.seq)+len(b) > limit {
		f.over = true
		return
	}
	f.seq = append(f.seq, b...)
}

// keepByte is keep of one byte.
func (f *Filter) keepByte(b byte, limit int) {
	if f.over || len(f.seq) >= limit {
		f.over = true
		return
	}
	f.seq = append(f.seq, b)
}

// reset drops the sequence being read.
func (f *Filter) reset() {
	f.state, f.over = stGround, false
	f.seq = f.seq[:0]
}

// end completes an ESC or CSI sequence: classify decides what becomes
// of it.
func (f *Filter) end(dst []byte, classify func([]byte) verdict) []byte {
	if !f.over {
		n := len(dst)
		dst = f.apply(dst, classify(f.seq))
		f.track(dst[n:])
	}
	f.reset()
	return dst
}

// track follows which alternate screen the passed sequence seq leaves
// the terminal in, for End.
func (f *Filter) track(seq []byte) {
	s := string(seq)
	if s == "\x1bc" {
		f.alt = ""
		return
	}
	body, ok := strings.CutPrefix(s, "\x1b[?")
	if !ok || len(body) == 0 || body[len(body)-1] != 'h' && body[len(body)-1] != 'l' {
		return
	}
	for _, m := range strings.Split(body[:len(body)-1], ";") {
		switch {
		case m != "47" && m != "1047" && m != "1049":
		case body[len(body)-1] == 'h':
			f.alt = m
		default:
			f.alt = ""
		}
	}
}

// endSession resets, once the session ended, every state of the
// terminal the filter lets a session set but the alternate screen (End)
// and the title: colours and attributes, character sets, an open
// hyperlink, insert mode, cursor keys and keypad, origin mode and
// auto-wrap, the cursor's visibility, blink and style, mouse and focus
// reports, bracketed paste, synchronized output, modified keys, and the
// scrolling region (the cursor kept where it is).
const endSession = "\x1b[0m\x1b(B\x1b)B\x1b*B\x1b+B\x0f\x1b]8;;\x1b\\\x1b[4l\x1b[?1l\x1b>" +
	"\x1b[?6l\x1b[?7h\x1b[?25h\x1b[?12l\x1b[ q" +
	"\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1004l\x1b[?1005l\x1b[?1006l\x1b[?1007l\x1b[?1015l\x1b[?1016l" +
	"\x1b[?2004l\x1b[?2026l\x1b[>4m\x1b7\x1b[r\x1b8"

// End is what the relay writes to the person's terminal when the session
// ended: the terminal leaves the alternate screen the session left it in,
// and every other state the session could set is reset (endSession), so
// what the session set does not outlive it. A sequence begun and not
// ended is dropped.
func (f *Filter) End() []byte {
	s := endSession
	if f.alt != "" {
		s = "\x1b[?" + f.alt + "l" + s
	}
	f.reset()
	f.utf = f.utf[:0]
	f.alt = ""
	return []byte(s)
}

// endString completes a string sequence.
func (f *Filter) endString(dst []byte) []byte {
	if !f.over {
		dst = f.apply(dst, classifyString(f.seq, f.bel))
	}
	f.reset()
	return dst
}

// apply does what v says.
func (f *Filter) apply(dst []byte, v verdict) []byte {
	switch v.act {
	case pass:
		dst = append(dst, v.out...)
	case same:
		dst = append(dst, f.seq...)
	case answer:
		f.answer = append(f.answer, v.out...)
	}
	return dst
}

// act is what becomes of a sequence.
type act uint8

const (
	drop   act = iota
	pass       // to the person's terminal, as out
	same       // to the person's terminal, as read
	answer     // the relay answers out on the session's input
)

type verdict struct {
	act act
	out string
}

func passed(s string) verdict   { return verdict{pass, s} }
func answered(s string) verdict { return verdict{answer, s} }

var dropped = verdict{}

// classifyEsc decides an ESC sequence other than CSI and the strings:
// seq is ESC, its intermediates and its final byte.
func classifyEsc(seq []byte) verdict {
	s := string(seq[1:])
	switch s {
	case "7", "8", // save and restore the cursor
		"=", ">", // keypad modes
		"D", "E", "M", "H", // index, next line, reverse index, tab stop
		"c",        // full reset
		"#8", "#5": // screen alignment, single-width line
		return passed("\x1b" + s)
	}
	// Designating G0-G3: ESC ( ) * + and a final byte.
	if len(s) == 2 && strings.IndexByte("()*+", s[0]) >= 0 && s[1] >= 0x30 {
		return passed("\x1b" + s)
	}
	return dropped
}

// csi is a control sequence taken apart: its private prefix (one of
// < = > ?, or none), parameters, intermediates and final byte.
type csi struct {
	prefix        byte
	params        string // as written: numbers, ; and :
	intermediates string
	final         byte
}

// parseCSI takes the body of ESC [ apart; false when it is malformed.
func parseCSI(body []byte) (csi, bool) {
	var c csi
	c.final = body[len(body)-1]
	body = body[:len(body)-1]
	if len(body) > 0 && strings.IndexByte("<=>?", body[0]) >= 0 {
		c.prefix, body = body[0], body[1:]
	}
	i := 0
	for i < len(body) && (body[i] >= '0' && body[i] <= '9' || body[i] == ';' || body[i] == ':') {
		i++
	}
	rest := body[i:]
	for _, b := range rest {
		if b < 0x20 || b > 0x2f {
			return c, false
		}
	}
	c.intermediates = string(rest)
	c.params = string(body[:i])
	return c, true
}

// param is the first parameter's number; def when it is empty.
func (c csi) param(def int) int {
	first, _, _ := strings.Cut(c.params, ";")
	if first == "" {
		return def
	}
	n, err := strconv.Atoi(first)
	if err != nil {
		return -1
	}
	return n
}

// passCSI are the control sequences without prefix or intermediates
// passed as they are: cursor movement, erase, insert and delete,
// scrolling and its region, tabs, SGR, save and restore the cursor.
const passCSI = "@ABCDEFGHIJKLMPSTXZ`abdefgmrsu"

// passModes are the DEC private modes (CSI ? Pm h and l) passed:
// cursor keys, origin, auto-wrap, auto-repeat, cursor blink and
// visibility, the alternate screen, mouse reporting and its encodings,
// focus events, bracketed paste, synchronized output.
var passModes = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"1": true, "6": true, "7": true, "8": true, "9": true, "12": true, "25": true, "47": true,
		"1000": true, "1002": true, "1003": true, "1004": true, "1005": true, "1006": true, "1007": true,
		"1015": true, "1016": true, "1047": true, "1048": true, "1049": true, "2004": true, "2026": true,
	}
})

// classifyCSI decides a control sequence: seq is ESC [ and the rest.
func classifyCSI(seq []byte) verdict {
	body := seq[2:]
	if final := body[len(body)-1]; strings.IndexByte(passCSI, final) >= 0 && plainParams(body[:len(body)-1]) {
		// The common case, SGR and cursor movement: no prefix, no
		// intermediates.
		return verdict{act: same}
	}
	c, ok := parseCSI(body)
	if !ok {
		return dropped
	}
	whole := verdict{act: same}
	key := c.intermediates + string(c.final)
	switch c.prefix {
	case 0:
		switch {
		case key == "c" && c.param(0) == 0:
			return answered(answerDA1)
		case key == "n" && c.params == "5":
			return answered(answerDSR)
		case key == "n" && c.params == "6":
			// The cursor position: the terminal answers with where the
			// session's own output left the cursor.
			return whole
		case key == "t" && (c.param(0) == 22 || c.param(0) == 23):
			// Push and pop the title: the session's own.
			return whole
		case key == "h" || key == "l":
			// Of the ANSI modes, insert mode alone.
			return onlyModes(c, map[string]bool{"4": true}, "")
		case len(key) == 1 && strings.IndexByte(passCSI, key[0]) >= 0:
			return whole
		case key == " q", key == "!p":
			// Cursor style; soft reset.
			return whole
		}
	case '?':
		switch key {
		case "h", "l":
			return onlyModes(c, passModes(), "?")
		case "J", "K":
			return whole
		}
	case '>':
		// Modified keys (vim's modifyOtherKeys), the kitty keyboard
		// stack: how keys are sent to the session.
		switch key {
		case "m", "n", "u":
			return whole
		}
	case '<', '=':
		if key == "u" {
			return whole
		}
	}
	return dropped
}

// plainParams reports whether b holds parameters only: digits, ; and :.
func plainParams(b []byte) bool {
	for _, c := range b {
		if (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}

// onlyModes passes a set or reset of modes with only those of its
// parameters that allowed names; nothing when none is.
func onlyModes(c csi, allowed map[string]bool, prefix string) verdict {
	var keep []string
	for _, p := range strings.Split(c.params, ";") {
		if allowed[p] {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 || c.intermediates != "" {
		return dropped
	}
	return passed("\x1b[" + prefix + strings.Join(keep, ";") + string(c.final))
}

// classifyString decides a string sequence: seq is ESC, its kind (] P _
// ^ X) and its content; bel says it ended with BEL. Of them, the OSCs
// that set the title (0, 1, 2), the working folder (7) and a hyperlink
// (8) pass, with text in them only; DCS, APC, PM and SOS never do.
func classifyString(seq []byte, bel bool) verdict {
	if seq[1] != ']' {
		return dropped
	}
	body := string(seq[2:])
	num, text, ok := strings.Cut(body, ";")
	if !ok || !printable(text) {
		return dropped
	}
	switch num {
	case "0", "1", "2", "7", "8":
	default:
		return dropped
	}
	if bel {
		return passed("\x1b]" + body + "\a")
	}
	return passed("\x1b]" + body + "\x1b\\")
}

// printable reports whether s is UTF-8 text without controls.
func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r >= 0x7f && r <= 0x9f || r == utf8.RuneError {
			return false
		}
	}
	return true
}
