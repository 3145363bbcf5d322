package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// Verified is what Verify found in a log whose chain holds.
type Verified struct {
	// Lines is the number of lines.
	Lines int64 `json:"lines"`
	// Head is the last line's hash: kept elsewhere and given back to
	// Verify, it shows the log was not cut short or replaced since.
	Head string `json:"head"`
	// Sessions is the number of session_start lines.
	Sessions int `json:"sessions"`
}

// BrokenDetail is the detail of FS_AUDIT_BROKEN: the first line at
// fault (1 is the first), 0 when the fault is the log's whole (a head
// that is not in it).
type BrokenDetail struct {
	Line int64 `json:"line"`
}

// Verify reads the log r (named name in errors) and checks its chain:
// each line has the hash of its own bytes, the next sequence number
// (the first line 1) and the hash of the line before it (the first
// line none). The first line at fault is FS_AUDIT_BROKEN with its
// number. With head, the log must hold a line of that hash: a log cut
// short before it, or replaced, fails. The chain alone cannot tell a
// log cut short at its end, or a whole log written anew, from a true
// one (docs/design.md §10).
func Verify(r io.Reader, name, head string) (Verified, error) {
	var v Verified
	broken := func(n int64, why string) error {
		e := fserr.New(fserr.AuditBroken, fmt.Sprintf("audit verify: %s: line %d: %s", name, n, why))
		e.Detail = BrokenDetail{Line: n}
		return e
	}
	br := bufio.NewReaderSize(r, 64<<10)
	prev, headSeen := "", head == ""
	for n := int64(1); ; n++ {
		ln, err := readLine(br)
		if err == io.EOF {
			break
		}
		if err != nil {
			if fserr.CodeOf(err) == fserr.AuditBroken {
				return v, broken(n, err.Error())
			}
			return v, fserr.FromOS("audit verify: read", name, err)
		}
		body, hash, ok := splitHash(ln)
		if !ok {
			return v, broken(n, "not a line of an audit log: it has no hash of its own at its end")
		}
		if lineHash(ln) != hash {
			return v, broken(n, "its hash does not match its bytes: the line was changed")
		}
		var got struct {
			Seq   int64  `json:"seq"`
			Event string `json:"event"`
			Prev  string `json:"prev"`
		}
		if err := json.Unmarshal(append(bytes.Clone(body), '}'), &got); err != nil {
			return v, broken(n, "not JSON: "+err.Error())
		}
		if got.Seq != n {
			return v, broken(n, fmt.Sprintf("seq %d where %d was due: a line was removed before it, or lines were moved", got.Seq, n))
		}
		if got.Prev != prev {
			return v, broken(n, fmt.Sprintf("prev does not match the hash of line %d: a line was removed, added or moved before it", n-1))
		}
		prev = hash
		headSeen = headSeen || hash == head
		if got.Event == EventSessionStart {
			v.Sessions++
		}
		v.Lines, v.Head = n, hash
	}
	if !headSeen {
		e := fserr.New(fserr.AuditBroken, fmt.Sprintf("audit verify: %s: no line has the hash %s given as its head: the log was cut short before it, or replaced", name, head))
		e.Detail = BrokenDetail{}
		return v, e
	}
	return v, nil
}

// errNoLineEnd is a last line without its line end: cut short.
var errNoLineEnd = fserr.New(fserr.AuditBroken, "the line has no line end: it was cut short")

// readLine reads one line, without its line end, of at most maxLine
// bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var ln []byte
	for {
		part, err := br.ReadSlice('\n')
		ln = append(ln, part...)
		if len(ln) > maxLine {
			return nil, fserr.New(fserr.AuditBroken, fmt.Sprintf("the line is longer than %d bytes", maxLine))
		}
		switch {
		case err == nil:
			return ln[:len(ln)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(ln) > 0:
			return nil, errNoLineEnd
		}
		return nil, err
	}
}
