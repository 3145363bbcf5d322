package sbpltest

import (
	"fmt"
	"strings"
)

// parse reads text's top-level forms: lists of symbols, "…" strings
// (with \" and \\ escapes), #"…" raw strings, and ; comments to the end
// of the line.
func parse(text string) ([]*node, error) {
	pr := &parser{s: text, line: 1}
	var forms []*node
	for {
		pr.space()
		if pr.i >= len(pr.s) {
			return forms, nil
		}
		n, err := pr.node()
		if err != nil {
			return nil, err
		}
		if n.list == nil {
			return nil, fmt.Errorf("line %d: an atom outside a form", n.line)
		}
		forms = append(forms, n)
	}
}

type parser struct {
	s    string
	i    int
	line int
}

// space skips blanks and comments.
func (p *parser) space() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == '\n':
			p.line++
			p.i++
		case c == ' ' || c == '\t' || c == '\r':
			p.i++
		case c == ';':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

// node reads one s-expression.
func (p *parser) node() (*node, error) {
	p.space()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("line %d: unexpected end", p.line)
	}
	line := p.line
	switch {
	case p.s[p.i] == '(':
		p.i++
		n := &node{list: []*node{}, line: line}
		for {
			p.space()
			if p.i >= len(p.s) {
				return nil, fmt.Errorf("line %d: unclosed (", line)
			}
			if p.s[p.i] == ')' {
				p.i++
				return n, nil
			}
			x, err := p.node()
			if err != nil {
				return nil, err
			}
			n.list = append(n.list, x)
		}
	case p.s[p.i] == ')':
		return nil, fmt.Errorf("line %d: unexpected )", line)
	case strings.HasPrefix(p.s[p.i:], `#"`):
		end := strings.IndexByte(p.s[p.i+2:], '"')
		if end < 0 {
			return nil, fmt.Errorf("line %d: unclosed #\"", line)
		}
		v := p.s[p.i+2 : p.i+2+end]
		p.i += end + 3
		return &node{atom: v, str: true, raw: true, line: line}, nil
	case p.s[p.i] == '"':
		var b strings.Builder
		for p.i++; p.i < len(p.s) && p.s[p.i] != '"'; p.i++ {
			if p.s[p.i] == '\\' && p.i+1 < len(p.s) {
				p.i++
			}
			if p.s[p.i] == '\n' {
				p.line++
			}
			b.WriteByte(p.s[p.i])
		}
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("line %d: unclosed \"", line)
		}
		p.i++
		return &node{atom: b.String(), str: true, line: line}, nil
	}
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune(" \t\r\n();\"", rune(p.s[p.i])) {
		p.i++
	}
	return &node{atom: p.s[start:p.i], line: line}, nil
}
