//go:build unix

package gocacheprog

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAppendResponseIsJSON: the hand-written encoder writes each answer
// byte for byte as encoding/json's Encoder (the go command's reader's
// own package) would.
func TestAppendResponseIsJSON(t *testing.T) {
	when := time.Unix(0, 1765000000123456789)
	for _, r := range []response{
		{KnownCommands: []string{cmdGet, cmdPut, cmdClose}},
		{ID: 7, Miss: true},
		{ID: -3, Err: `unknown command "x<y>&\"z\"\n\u00e9"`},
		{ID: 1 << 40, OutputID: bytes.Repeat([]byte{0xfb, 0x01}, 16), Size: 12345, Time: &when, DiskPath: "/home/p/.cache/go-build/ab/ab-d"},
		{ID: 2, DiskPath: "/home/p q/<cache>/é/\"x\"\\"},
		{ID: 3, Size: -1},
	} {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(r); err != nil {
			t.Fatal(err)
		}
		if got := appendResponse(nil, &r); string(got) != want.String() {
			t.Errorf("appendResponse:\n got %s\nwant %s", got, want.String())
		}
	}
}

// client drives Serve over pipes, as the go command does.
type client struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error
}

func startServe(t *testing.T, dir string) *client {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &client{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() {
		err := Serve(inR, outW, dir)
		outW.Close()
		c.done <- err
	}()
	var hello response
	c.read(&hello)
	if hello.ID != 0 || strings.Join(hello.KnownCommands, ",") != "get,put,close" {
		t.Fatalf("the first answer: %+v", hello)
	}
	return c
}

func (c *client) read(r *response) {
	c.t.Helper()
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("reading an answer: %v", err)
	}
	*r = response{}
	if err := json.Unmarshal(line, r); err != nil {
		c.t.Fatalf("an answer %q: %v", line, err)
	}
}

// put is a put request's lines, as the go command writes them.
func putLines(id int64, action []byte, body []byte) string {
	sum := sha256.Sum256(body)
	req, _ := json.Marshal(request{ID: id, Command: cmdPut, ActionID: action, OutputID: sum[:], BodySize: int64(len(body))})
	b, _ := json.Marshal(body)
	return string(req) + "\n" + string(b) + "\n"
}

func getLine(id int64, action []byte) string {
	req, _ := json.Marshal(request{ID: id, Command: cmdGet, ActionID: action})
	return string(req) + "\n"
}

func actionID(i int) []byte {
	sum := sha256.Sum256([]byte(fmt.Sprint("action ", i)))
	return sum[:]
}

// TestServeConcurrentRequests: requests that arrive together (here all
// in one write, which Serve answers beside each other) each get their
// own answer, under their own ID, exactly once; a close is answered
// after all of them. Run it with -race.
func TestServeConcurrentRequests(t *testing.T) {
	dir := t.TempDir()
	c := startServe(t, dir)
	const n = 64
	var puts strings.Builder
	for i := range n {
		puts.WriteString(putLines(int64(1000+i), actionID(i), []byte(fmt.Sprint("body ", i))))
	}
	go io.WriteString(c.in, puts.String())
	seen := map[int64]bool{}
	for range n {
		var r response
		c.read(&r)
		if r.ID < 1000 || r.ID >= 1000+n || seen[r.ID] || r.Err != "" || r.DiskPath == "" {
			t.Fatalf("a put's answer: %+v (seen before: %v)", r, seen[r.ID])
		}
		seen[r.ID] = true
	}
	// Gets of every entry, of missing ones, an unknown command, then close.
	var gets strings.Builder
	for i := range 2 * n {
		gets.WriteString(getLine(int64(i+1), actionID(i)))
	}
	gets.WriteString(`{"ID":500,"Command":"get2"}` + "\n" + `{"ID":501,"Command":"close"}` + "\n")
	go io.WriteString(c.in, gets.String())
	answered := map[int64]response{}
	for range 2*n + 2 {
		var r response
		c.read(&r)
		if _, ok := answered[r.ID]; ok {
			t.Fatalf("request %d answered twice", r.ID)
		}
		if r.ID == 501 && len(answered) != 2*n+1 {
			t.Fatalf("close answered after %d of %d requests", len(answered), 2*n+1)
		}
		answered[r.ID] = r
	}
	for i := range 2 * n {
		r := answered[int64(i+1)]
		if i >= n {
			if !r.Miss {
				t.Errorf("get of a missing entry %d: %+v", i, r)
			}
			continue
		}
		body := []byte(fmt.Sprint("body ", i))
		sum := sha256.Sum256(body)
		data, err := os.ReadFile(r.DiskPath)
		if r.Miss || string(r.OutputID) != string(sum[:]) || r.Size != int64(len(body)) || err != nil || string(data) != string(body) {
			t.Errorf("get %d: %+v, body %q (%v)", i, r, data, err)
		}
	}
	if r := answered[500]; r.Err != `unknown command "get2"` {
		t.Errorf("an unknown command's answer: %+v", r)
	}
	if err := <-c.done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// TestServePutAfterClean: a put after the cache's subfolders were
// removed while Serve ran (go clean -cache) writes its entry anew, and
// a get finds it.
func TestServePutAfterClean(t *testing.T) {
	dir := t.TempDir()
	c := startServe(t, dir)
	var r response
	io.WriteString(c.in, putLines(1, actionID(1), []byte("one")))
	if c.read(&r); r.Err != "" {
		t.Fatalf("put: %+v", r)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, n := range names {
		if err := os.RemoveAll(n); err != nil {
			t.Fatal(err)
		}
	}
	io.WriteString(c.in, getLine(2, actionID(1)))
	if c.read(&r); !r.Miss {
		t.Fatalf("a get after the clean: %+v", r)
	}
	io.WriteString(c.in, putLines(3, actionID(1), []byte("one")))
	if c.read(&r); r.Err != "" || r.ID != 3 {
		t.Fatalf("a put after the clean: %+v", r)
	}
	io.WriteString(c.in, getLine(4, actionID(1)))
	if c.read(&r); r.Miss || r.ID != 4 || r.Size != 3 {
		t.Fatalf("a get after the put: %+v", r)
	}
	c.in.Close()
	if err := <-c.done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// BenchmarkServeGet: one get of an entry that is there, answered
// through real pipes, as the go command asks them (one at a time).
func BenchmarkServeGet(b *testing.B) {
	dir := b.TempDir()
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- Serve(inR, outW, dir)
		outW.Close()
	}()
	out := bufio.NewReader(outR)
	answer := func() string {
		line, err := out.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		return line
	}
	answer()
	io.WriteString(inW, putLines(1, actionID(1), []byte("body")))
	answer()
	get := getLine(2, actionID(1))
	b.ResetTimer()
	for range b.N {
		io.WriteString(inW, get)
		if a := answer(); !strings.Contains(a, `"DiskPath"`) {
			b.Fatalf("a get's answer: %s", a)
		}
	}
	b.StopTimer()
	inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
