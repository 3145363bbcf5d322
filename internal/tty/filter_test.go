package tty

import (
	"bytes"
	"strings"
	"testing"
)

// filterTable is the relay's filter as a table: each sequence the
// session may write, what a terminal does with it, and what reaches the
// person's terminal ("" and no reply: dropped whole). Text around a
// dropped sequence passes unchanged (the "text around" cases, and every
// case is run again with text on both sides).
var filterTable = []struct {
	name, in, does string
	out, reply     string
}{
	// Text and the C0 controls a shell needs.
	{"text", "hello, wörld ✓", "prints", "hello, wörld ✓", ""},
	{"newline", "a\r\nb\tc\bd", "CR, LF, tab, backspace", "a\r\nb\tc\bd", ""},
	{"bell", "\a", "rings the bell", "\a", ""},
	{"shift out/in", "\x0e q\x0f", "selects G1, then G0", "\x0e q\x0f", ""},
	{"ENQ", "a\x05b", "sends the answerback message into the input", "ab", ""},
	{"NUL and DEL", "a\x00\x7fb", "ignored", "ab", ""},
	{"invalid UTF-8", "a\xffb\xc3", "shows U+FFFD", "ab", ""},

	// Drawing: SGR, cursor, erase, scrolling.
	{"SGR", "\x1b[1;38;2;1;2;3m", "bold, a true colour", "\x1b[1;38;2;1;2;3m", ""},
	{"SGR colon", "\x1b[4:3m", "curly underline", "\x1b[4:3m", ""},
	{"cursor position", "\x1b[12;40H", "moves the cursor", "\x1b[12;40H", ""},
	{"cursor up", "\x1b[A\x1b[3B\x1b[C\x1b[D", "moves the cursor", "\x1b[A\x1b[3B\x1b[C\x1b[D", ""},
	{"erase", "\x1b[2J\x1b[K\x1b[?2K", "erases display, line", "\x1b[2J\x1b[K\x1b[?2K", ""},
	{"insert delete", "\x1b[3@\x1b[2P\x1b[L\x1b[M\x1b[5X", "edits the line", "\x1b[3@\x1b[2P\x1b[L\x1b[M\x1b[5X", ""},
	{"scrolling region", "\x1b[2;20r", "sets the scrolling region", "\x1b[2;20r", ""},
	{"scroll", "\x1b[3S\x1b[2T", "scrolls up, down", "\x1b[3S\x1b[2T", ""},
	{"save restore", "\x1b7\x1b8\x1b[s\x1b[u", "saves, restores the cursor", "\x1b7\x1b8\x1b[s\x1b[u", ""},
	{"index", "\x1bD\x1bE\x1bM", "index, next line, reverse index", "\x1bD\x1bE\x1bM", ""},
	{"tab stops", "\x1bH\x1b[3g", "sets, clears tab stops", "\x1bH\x1b[3g", ""},
	{"reset", "\x1bc\x1b[!p", "full, soft reset", "\x1bc\x1b[!p", ""},
	{"cursor style", "\x1b[2 q", "a block cursor", "\x1b[2 q", ""},
	{"charsets", "\x1b(0\x1b)B\x1b(B", "line drawing in G0, ASCII in G1", "\x1b(0\x1b)B\x1b(B", ""},
	{"keypad", "\x1b=\x1b>", "application, numeric keypad", "\x1b=\x1b>", ""},
	{"insert mode", "\x1b[4h\x1b[4l", "insert, replace", "\x1b[4h\x1b[4l", ""},
	{"send/receive mode", "\x1b[12l", "the terminal echoes what is typed itself", "", ""},

	// Modes an editor and a shell set.
	{"alternate screen", "\x1b[?1049h\x1b[?1049l\x1b[?47h", "switches screens", "\x1b[?1049h\x1b[?1049l\x1b[?47h", ""},
	{"cursor keys, cursor", "\x1b[?1h\x1b[?25l\x1b[?12h", "application cursor keys, hides the cursor", "\x1b[?1h\x1b[?25l\x1b[?12h", ""},
	{"origin auto-wrap", "\x1b[?6h\x1b[?7l", "origin mode, no auto-wrap", "\x1b[?6h\x1b[?7l", ""},
	{"bracketed paste", "\x1b[?2004h", "brackets pasted text", "\x1b[?2004h", ""},
	{"mouse", "\x1b[?1000;1006h\x1b[?1002h\x1b[?1003l", "mouse reports, SGR encoding", "\x1b[?1000;1006h\x1b[?1002h\x1b[?1003l", ""},
	{"focus", "\x1b[?1004h", "reports focus in and out", "\x1b[?1004h", ""},
	{"mode list trimmed", "\x1b[?1049;3;5;1006h", "alternate screen, 132 columns, reverse video, SGR mouse", "\x1b[?1049;1006h", ""},
	{"132 columns", "\x1b[?3h", "resizes the window", "", ""},
	{"margins", "\x1b[?69h", "left and right margins", "", ""},
	{"save modes", "\x1b[?1049s\x1b[?1049r", "saves and restores DEC modes", "", ""},
	{"modify other keys", "\x1b[>4;2m\x1b[>4m", "how keys are sent", "\x1b[>4;2m\x1b[>4m", ""},
	{"kitty keyboard", "\x1b[>1u\x1b[<u\x1b[=1;1u", "pushes, pops, sets key flags", "\x1b[>1u\x1b[<u\x1b[=1;1u", ""},

	// Titles, the working folder, hyperlinks.
	{"title BEL", "\x1b]0;vim: a.go\a", "sets the window title", "\x1b]0;vim: a.go\a", ""},
	{"title ST", "\x1b]2;tïtle\x1b\\", "sets the window title", "\x1b]2;tïtle\x1b\\", ""},
	{"icon name", "\x1b]1;x\a", "sets the icon name", "\x1b]1;x\a", ""},
	{"cwd", "\x1b]7;file://host/tmp/a\a", "tells the terminal the folder", "\x1b]7;file://host/tmp/a\a", ""},
	{"hyperlink", "\x1b]8;;https://example.com/\x1b\\link\x1b]8;;\x1b\\", "links the text", "\x1b]8;;https://example.com/\x1b\\link\x1b]8;;\x1b\\", ""},
	{"title push pop", "\x1b[22;0t\x1b[23;0t", "saves, restores the title", "\x1b[22;0t\x1b[23;0t", ""},
	{"title with a control", "\x1b]0;a\x05b\a", "a title with ENQ in it", "", ""},

	// The clipboard.
	{"OSC 52 write", "\x1b]52;c;dG91Y2ggeAo=\a", "replaces the clipboard", "", ""},
	{"OSC 52 query", "\x1b]52;c;?\a", "answers the clipboard into the input", "", ""},
	{"OSC 52 write ST", "\x1b]52;p;eA==\x1b\\", "replaces the primary selection", "", ""},

	// Queries the terminal answers into the input.
	{"DA1", "\x1b[c", "answers its attributes", "", answerDA1},
	{"DA1 0", "\x1b[0c", "answers its attributes", "", answerDA1},
	{"DA2", "\x1b[>c", "answers its type and version", "", ""},
	{"DA3", "\x1b[=c", "answers its unit id", "", ""},
	{"DSR status", "\x1b[5n", "answers ready", "", answerDSR},
	{"CPR", "\x1b[6n", "answers the cursor position, where the session's output put it", "\x1b[6n", ""},
	{"DECXCPR", "\x1b[?6n", "answers the cursor position and page", "", ""},
	{"DSR printer", "\x1b[?15n", "answers printer status", "", ""},
	{"DECRQM", "\x1b[?2004$p", "answers a mode's state", "", ""},
	{"DECRQM ANSI", "\x1b[4$p", "answers a mode's state", "", ""},
	{"XTVERSION", "\x1b[>q", "answers its name and version", "", ""},
	{"kitty keyboard query", "\x1b[?u", "answers the key flags", "", ""},
	{"DECID", "\x1bZ", "answers its attributes", "", ""},
	{"DECREQTPARM", "\x1b[x", "answers line parameters", "", ""},
	{"DECRQSS", "\x1bP$qm\x1b\\", "answers a setting", "", ""},
	{"XTGETTCAP", "\x1bP+q544e\x1b\\", "answers terminfo capabilities", "", ""},
	{"colour query", "\x1b]4;1;?\a\x1b]10;?\a\x1b]11;?\x1b\\\x1b]12;?\a\x1b]17;?\a\x1b]19;?\a", "answers the palette", "", ""},
	{"font query", "\x1b]50;?\a", "answers the font", "", ""},
	{"window reports", "\x1b[11t\x1b[13t\x1b[14t\x1b[18t\x1b[19t\x1b[20t\x1b[21t", "answer state, position, sizes, titles", "", ""},

	// What acts beyond the screen.
	{"palette set", "\x1b]4;1;#000000\a\x1b]10;#000000\a\x1b]11;#000000\a", "makes text invisible, outside the session", "", ""},
	{"palette reset", "\x1b]104\a\x1b]110\a", "resets colours", "", ""},
	{"font set", "\x1b]50;fixed\a", "changes the font", "", ""},
	{"notifications", "\x1b]9;hi\a\x1b]777;notify;a;b\a\x1b]99;;hi\x1b\\", "desktop notifications", "", ""},
	{"iTerm", "\x1b]1337;File=inline=1:AAAA\a", "files, images, settings", "", ""},
	{"tmux passthrough", "\x1bPtmux;\x1b\x1b]52;c;eA==\a\x1b\\", "hands a sequence to the outer terminal", "", ""},
	{"sixel", "\x1bPq#0;2;0;0;0~-\x1b\\", "draws an image", "", ""},
	{"user keys", "\x1bP1;1|17/6C73\x1b\\", "redefines keys (DECUDK)", "", ""},
	{"APC PM SOS", "\x1b_Gf=100;AAAA\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\", "kitty graphics, private messages", "", ""},
	{"window ops", "\x1b[1t\x1b[2t\x1b[3;0;0t\x1b[8;50;200t\x1b[9;1t\x1b[10;1t", "iconify, move, resize, maximize", "", ""},
	{"media copy", "\x1b[5i\x1b[?5i", "prints", "", ""},
	{"bell urgency", "\x1b[?1042h\x1b[?1043h", "raises the window on a bell", "", ""},
	{"8-bit controls", "\x1b G", "answers in 8-bit controls", "", ""},
	{"UTF-8 off", "\x1b%@", "leaves UTF-8", "", ""},
	{"double size", "\x1b#3\x1b#6", "double-height and -width lines", "", ""},

	// Terminators and forms.
	{"8-bit CSI", "\x9b31m", "CSI in 8 bits", "\x1b[31m", ""},
	{"C1 in UTF-8", "\xc2\x9b31m", "CSI as U+009B", "\x1b[31m", ""},
	{"8-bit OSC 52", "\x9d52;c;?\x9c", "the clipboard, in 8 bits", "", ""},
	{"UTF-8 OSC 52", "\xc2\x9d52;c;eA==\xc2\x9c", "the clipboard, as U+009D", "", ""},
	{"8-bit title", "\x9d0;t\x9c", "a title in 8 bits", "\x1b]0;t\x1b\\", ""},
	{"CAN aborts", "\x1b]52;c;eA==\x18x", "CAN ends the sequence unfinished", "x", ""},
	{"SUB aborts CSI", "\x1b[31\x1ax", "SUB ends the sequence unfinished", "x", ""},
	{"ESC ends a string", "\x1b]52;c;eA==\x1b[1mx", "the OSC ends unterminated, SGR follows", "\x1b[1mx", ""},
	{"control inside CSI", "\x1b[3\n1m", "LF acted on inside a CSI", "\n1m", ""},
	{"lone ST", "\x1b\\x", "nothing", "x", ""},
	{"unknown CSI", "\x1b[5;5~\x1b[?1;2$x", "unknown to the filter", "", ""},
	{"malformed CSI", "\x1b[1?2m", "a prefix in the middle", "", ""},
}

// runFilter filters in, cut into the given chunks, and returns what
// passed and what the relay answers.
func runFilter(chunks ...string) (string, string) {
	var f Filter
	var out []byte
	for _, c := range chunks {
		out = f.Write(out, []byte(c))
	}
	return string(out), string(f.Replies())
}

func TestFilter(t *testing.T) {
	for _, tc := range filterTable {
		t.Run(tc.name, func(t *testing.T) {
			out, reply := runFilter(tc.in)
			if out != tc.out || reply != tc.reply {
				t.Errorf("%q (a terminal: %s): passed %q, answered %q; want %q, %q", tc.in, tc.does, out, reply, tc.out, tc.reply)
			}
			// Text on both sides passes as it is.
			out, reply = runFilter("before " + tc.in + " after")
			if want := "before " + tc.out + " after"; out != want || reply != tc.reply {
				t.Errorf("with text around: passed %q, answered %q; want %q, %q", out, reply, want, tc.reply)
			}
			// Cut at every byte, the same.
			for i := 1; i < len(tc.in); i++ {
				if out, reply := runFilter(tc.in[:i], tc.in[i:]); out != tc.out || reply != tc.reply {
					t.Errorf("cut at %d: passed %q, answered %q; want %q, %q", i, out, reply, tc.out, tc.reply)
				}
			}
			bytewise := make([]string, len(tc.in))
			for i := 0; i < len(tc.in); i++ {
				bytewise[i] = tc.in[i : i+1]
			}
			if out, reply := runFilter(bytewise...); out != tc.out || reply != tc.reply {
				t.Errorf("byte by byte: passed %q, answered %q; want %q, %q", out, reply, tc.out, tc.reply)
			}
		})
	}
}

// TestFilterOutputCanonical: what the filter passes, filtered again,
// passes unchanged: the terminal reads the output as the filter did.
func TestFilterOutputCanonical(t *testing.T) {
	for _, tc := range filterTable {
		if out, _ := runFilter(tc.out); out != tc.out {
			t.Errorf("%s: %q filtered again is %q", tc.name, tc.out, out)
		}
	}
}

// TestFilterNeverTerminated: an OSC never terminated holds no more than
// maxString bytes, passes nothing of itself, and the next sequence ends
// it; so does a CSI that never ends.
func TestFilterNeverTerminated(t *testing.T) {
	var f Filter
	chunk := []byte(strings.Repeat("A", 64<<10))
	out := f.Write(nil, []byte("\x1b]52;c;"))
	for i := 0; i < 64; i++ {
		out = f.Write(out, chunk)
		if cap(f.seq) > 2*maxString {
			t.Fatalf("the filter holds %d bytes of an unterminated string", cap(f.seq))
		}
	}
	out = f.Write(out, []byte("\a after"))
	if string(out) != " after" {
		t.Errorf("an unterminated OSC let %d bytes through: %.40q", len(out), out)
	}
	f = Filter{}
	out = f.Write(nil, []byte("\x1b["+strings.Repeat("1;", 64<<10)+"m after"))
	if string(out) != " after" || cap(f.seq) > 2*maxControl {
		t.Errorf("an overlong CSI: passed %.40q, holds %d bytes", out, cap(f.seq))
	}
}

// FuzzFilter: whatever the session writes, the output holds no sequence
// the filter would not pass again, and no clipboard sequence.
func FuzzFilter(f *testing.F) {
	for _, tc := range filterTable {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, _ := runFilter(string(in))
		if again, _ := runFilter(out); again != out {
			t.Errorf("%q passed %q, which filtered again is %q", in, out, again)
		}
		if bytes.Contains([]byte(out), []byte("\x1b]52")) {
			t.Errorf("%q passed an OSC 52: %q", in, out)
		}
	})
}

// BenchmarkFilter: the filter over a typical terminal stream: text with
// colours, as ls --color or a compiler writes it.
func BenchmarkFilter(b *testing.B) {
	chunk := []byte(strings.Repeat("\x1b[01;34mfolder\x1b[0m  file.go  wörd ✓\r\n", 800))
	var f Filter
	out := make([]byte, 0, len(chunk))
	b.SetBytes(int64(len(chunk)))
	for b.Loop() {
		out = f.Write(out[:0], chunk)
	}
}

// TestFilterEnd: at the session's end the terminal leaves the alternate
// screen the session left it in, and only that one, and every other
// state the filter passes is reset, the scrolling region included.
func TestFilterEnd(t *testing.T) {
	for _, tc := range []struct{ in, leave string }{
		{"", ""},
		{"\x1b[?1049h", "\x1b[?1049l"},
		{"\x1b[?1049h\x1b[?1049l", ""},
		{"\x1b[?47h", "\x1b[?47l"},
		{"\x1b[?1047;1006h", "\x1b[?1047l"},
		{"\x1b[?1049h\x1bc", ""},
		{"\x1b[?1049h\x1b]52;c;?", "\x1b[?1049l"},
	} {
		var f Filter
		f.Write(nil, []byte(tc.in))
		end := string(f.End())
		if !strings.HasPrefix(end, tc.leave+"\x1b[0m") {
			t.Errorf("after %q: End is %q, want it to start with %q", tc.in, end, tc.leave)
		}
		for _, want := range []string{"\x1b[r", "\x1b[?6l", "\x1b[?25h", "\x1b[?1000l", "\x1b(B"} {
			if !strings.Contains(end, want) {
				t.Errorf("End lacks %q: %q", want, end)
			}
		}
		if out := f.Write(nil, []byte("x")); string(out) != "x" {
			t.Errorf("after End a sequence begun was kept: %q", out)
		}
	}
}
