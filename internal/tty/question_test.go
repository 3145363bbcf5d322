//go:build unix

package tty

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestLayout: the question's head is on the screen whole, the body is
// cut to the rows left with a count of the lines cut, the question is the
// last row, and no row is wider than the screen less a column; a head
// that does not fit is refused.
func TestLayout(t *testing.T) {
	head := []string{"dsh-fs: write /outside/" + strings.Repeat("long-name/", 12) + "x was denied under workspace-write mode (outside the roots).", "The change:"}
	ask := "Allow this one call under danger-full-access mode? [y/N] "
	var body []string
	for i := 0; i < 100; i++ {
		body = append(body, fmt.Sprintf("  +line %d\twith a tab", i))
	}
	for _, tc := range []struct {
		name       string
		rows, cols int
		body       []string
		ok         bool
		cut        string
	}{
		{"all fits", 40, 200, body[:5], true, ""},
		{"body cut", 24, 80, body, true, "… 82 more lines not shown"},
		{"exactly fits", 9, 200, body[:5], true, ""},
		{"one row short", 8, 200, body[:5], true, "… 2 more lines not shown"},
		{"only the count", 5, 200, body[:5], true, "… 5 more lines not shown"},
		{"head does not fit", 4, 200, body[:5], false, ""},
		{"narrow", 24, 20, nil, true, ""},
		{"too narrow for the head", 5, 20, nil, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, ok := layout(head, tc.body, ask, tc.rows, tc.cols)
			if ok != tc.ok {
				t.Fatalf("fits = %v, want %v: %q", ok, tc.ok, rows)
			}
			if !ok {
				return
			}
			if len(rows) > tc.rows {
				t.Errorf("%d rows on a screen of %d", len(rows), tc.rows)
			}
			for _, r := range rows {
				if w := utf8.RuneCountInString(r); w > tc.cols-1 || strings.ContainsAny(r, "\t\n\r") {
					t.Errorf("row %q: %d columns, or a control, on a screen of %d", r, w, tc.cols)
				}
			}
			joined := strings.Join(rows, "")
			if !strings.Contains(joined, "/outside/"+strings.Repeat("long-name/", 12)+"x") {
				t.Errorf("the path is not whole on the screen: %q", rows)
			}
			if rows[len(rows)-1] != ask && !strings.HasSuffix(ask, rows[len(rows)-1]) {
				t.Errorf("the last row is %q, not the question", rows[len(rows)-1])
			}
			if tc.cut != "" && !strings.Contains(joined, tc.cut) {
				t.Errorf("no %q: %q", tc.cut, rows)
			}
			if tc.cut == "" && strings.Contains(joined, "more line") {
				t.Errorf("the body was cut: %q", rows)
			}
		})
	}
}

// TestWrap: rows are cut at a space in their second half, else at the
// width; a character outside ASCII counts two columns; a row never
// overflows, even one column wide.
func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"short", 10, []string{"short"}},
		{"aaaa bbbb cccc", 10, []string{"aaaa bbbb ", "cccc"}},
		{"a bbbbbbbbbbbb", 10, []string{"a bbbbbbbb", "bbbb"}},
		{"ééééé", 4, []string{"éé", "éé", "é"}},
		{"éa", 1, []string{"é", "a"}},
		{"", 10, []string{""}},
	} {
		if got := wrap(tc.in, tc.width); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
	if got := expandTabs("a\tb\t"); got != "a       b       " {
		t.Errorf("expandTabs: %q", got)
	}
}
