//go:build unix

package supervisor

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEscapeLog: a JSON line of the supervisor's carrying strings the
// session chose (a host with C1 controls, an ESC, a bidirectional
// override, bytes that are not UTF-8) reaches exec's standard error
// with no byte a terminal reads as a control, and decodes to the same
// value.
func TestEscapeLog(t *testing.T) {
	for _, host := range []string{
		"plain.example",
		"\u009d52;c;dG91Y2ggeA==\u009c",
		"\u009b2J\u0085x",
		"a\x1b]52;c;?\x07b",
		"\u202eevil",
	} {
		var raw bytes.Buffer
		json.NewEncoder(&raw).Encode(map[string]string{"host": host})
		got := escapeLog(raw.Bytes())
		for _, bad := range []string{"\x1b", "\u009d", "\u009b", "\u009c", "\u0085", "\u202e", "\x07"} {
			if bytes.Contains(got, []byte(bad)) {
				t.Errorf("%q: the line still holds %q: %q", host, bad, got)
			}
		}
		var back map[string]string
		if err := json.Unmarshal(got, &back); err != nil || back["host"] != host {
			t.Errorf("%q: the escaped line %q decodes to %q, %v", host, got, back["host"], err)
		}
	}
	if got := string(escapeLog([]byte("a\xffb\x9bc"))); got != `a\ufffdb\ufffdc` {
		t.Errorf("bytes that are not UTF-8: %q", got)
	}
}

// TestLogWaitsForQuestion: a line of the supervisor's written while a
// question is up (askMu held) reaches the terminal only after it.
func TestLogWaitsForQuestion(t *testing.T) {
	var mu sync.Mutex
	var out bytes.Buffer
	var outMu sync.Mutex
	w := logWriter{mu: &mu, w: writerFunc(func(p []byte) (int, error) {
		outMu.Lock()
		defer outMu.Unlock()
		return out.Write(p)
	})}
	mu.Lock()
	done := make(chan struct{})
	go func() {
		w.Write([]byte("refused\n"))
		close(done)
	}()
	time.Sleep(50 * time.Millisecond)
	outMu.Lock()
	early := out.String()
	outMu.Unlock()
	if early != "" {
		t.Errorf("a line reached the terminal while the question was up: %q", early)
	}
	mu.Unlock()
	<-done
	if !strings.Contains(out.String(), "refused") {
		t.Errorf("the line never came: %q", out.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
