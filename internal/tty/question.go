//go:build unix

package tty

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// The supervisor's question owns the screen (docs/design.md §10): the
// session may have left the terminal in any state its output could
// reach (an alternate screen with a fake question painted on it, a
// scrolling region two lines high, origin mode, another character set,
// invisible colours, an open hyperlink, insert mode, a hidden cursor).
// takeScreen puts the terminal in a state the session did not choose,
// on a clear screen of the question's own, and the question is drawn
// there by absolute position with auto-wrap off: no line can scroll
// another away, and what does not fit is cut and counted, never pushed
// off the screen.
const takeScreen = "\x18" + // CAN: end any sequence half written
	"\x1b[?1049l\x1b[?1047l\x1b[?47l" + // leave the session's alternate screen
	"\x1b[?1049h" + // an alternate screen of the question's own, cleared
	"\x1b[!p" + // soft reset (DECSTR), then each part of it explicitly:
	"\x1b[r\x1b[?69l" + // whole-screen scrolling region, no left/right margins
	"\x1b[?6l\x1b[?7l" + // origin mode off; auto-wrap off while the question is drawn
	"\x1b[4l\x1b[20l" + // replace mode, LF is a line feed only
	"\x1b[?5l\x1b[?2026l" + // normal video, no synchronized output holding the screen back
	"\x1b(B\x1b)B\x1b*B\x1b+B\x0f" + // ASCII in G0-G3, G0 selected (SI)
	"\x1b[0m\x1b]8;;\x1b\\" + // no colours or attributes, no open hyperlink
	"\x1b[?25h\x1b[ q" + // the cursor shown, in its default style
	"\x1b[>0u" + // keys sent as typed (kitty keyboard stack: pushed)
	"\x1b[H\x1b[2J"

// giveScreen ends the question: auto-wrap back on, the keyboard stack
// popped, and the normal screen back with its cursor. What the session
// had set up of its own (its alternate screen, its scrolling region)
// is not put back: it may redraw.
const giveScreen = "\x1b[0m\x1b[?7h\x1b[<u\x1b[?1049l"

// ErrQuestionTooBig is DrawQuestion's answer when what must be on the
// screen (the question's head and its last line) does not fit on the
// terminal: the caller refuses without asking.
var ErrQuestionTooBig = errors.New("the question does not fit on the terminal")

// defaultSize is the terminal's size when it cannot be read.
var defaultSize = unix.Winsize{Row: 24, Col: 80}

// DrawQuestion takes the person's terminal out (the session's state
// reset, a clear screen) and draws a question on it from the top: head
// (what is asked about, which must be seen whole), then body (details,
// cut to the rows left, with a line that counts what was cut), then ask
// (the last line, on which the cursor waits for the answer). Lines are
// wrapped to the terminal's width by DrawQuestion, never by the
// terminal. The text must hold no control characters (escape it
// first). It returns ErrQuestionTooBig, with the terminal still taken,
// when head and ask do not fit; the caller gives the terminal back with
// EndQuestion either way.
func DrawQuestion(out *os.File, head, body []string, ask string) error {
	ws, err := unix.IoctlGetWinsize(int(out.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Row == 0 || ws.Col == 0 {
		ws = &defaultSize
	}
	rows, ok := layout(head, body, ask, int(ws.Row), int(ws.Col))
	var b strings.Builder
	b.WriteString(takeScreen)
	if !ok {
		_, err := out.WriteString(b.String())
		return errors.Join(ErrQuestionTooBig, err)
	}
	for i, row := range rows {
		fmt.Fprintf(&b, "\x1b[%d;1H%s", i+1, row)
	}
	_, err = out.WriteString(b.String())
	return err
}

// EndQuestion gives the terminal back after DrawQuestion, and writes
// note, a line that stays on the normal screen (what was decided).
func EndQuestion(out *os.File, note string) {
	out.WriteString(giveScreen + "\r\n" + note + "\r\n")
}

// layout places head, body and ask on a screen of rows by cols: every
// line wrapped to cols-1 columns, head whole, body cut to the rows left
// with a last row saying how many lines were cut, ask last. false when
// head and ask (and the count of a cut body) do not fit.
func layout(head, body []string, ask string, rows, cols int) ([]string, bool) {
	width := max(cols-1, 1)
	var top []string
	for _, l := range head {
		top = append(top, wrap(expandTabs(l), width)...)
	}
	last := wrap(expandTabs(ask), width)
	room := rows - len(top) - len(last)
	var mid []string
	for i, l := range body {
		w := wrap(expandTabs(l), width)
		if len(mid)+len(w) > room || i < len(body)-1 && len(mid)+len(w) == room {
			left := len(body) - i
			mid = append(mid, wrap(fmt.Sprintf("… %d more line%s not shown", left, plural(left)), width)...)
			break
		}
		mid = append(mid, w...)
	}
	if len(top)+len(mid)+len(last) > rows {
		return nil, false
	}
	return append(append(top, mid...), last...), true
}

// expandTabs replaces each tab of line with the spaces to the next
// multiple of eight columns: a tab would move the cursor to the tab
// stops the session set (HTS), past the text it should show.
func expandTabs(line string) string {
	if !strings.Contains(line, "\t") {
		return line
	}
	var b strings.Builder
	col := 0
	for _, r := range line {
		if r == '\t' {
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// wrap cuts line into rows of at most width columns, after a space
// where one falls in the second half of a row, else at the width. A
// character outside ASCII counts two columns (wide or not): a row may
// end short, never overflow, since auto-wrap is off and an overflowing
// row would lose its end.
func wrap(line string, width int) []string {
	var rows []string
	for {
		cut, cols, space := len(line), 0, -1
		for i, r := range line {
			w := 1
			if r >= 0x80 {
				w = 2
			}
			if cols+w > width {
				cut = i
				break
			}
			cols += w
			if r == ' ' {
				space = i
			}
		}
		if cut == len(line) {
			return append(rows, line)
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(line)
		}
		if space > 0 && cols > 0 && space >= cut/2 {
			cut = space + 1
		}
		rows = append(rows, line[:cut])
		line = line[cut:]
	}
}
