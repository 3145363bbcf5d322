package session

import (
	"strings"
	"testing"
)

// TestDecodeMemo: a remember carries content alone, a recall a hash
// alone, and neither carries a call or asks to escalate; a memo rides on
// nothing else.
func TestDecodeMemo(t *testing.T) {
	sum := strings.Repeat("a", 64)
	for _, tc := range []struct {
		name, body string
		ok         bool
	}{
		{"remember", `{"op":"remember","escalate":"","dir":"","memo":{"content":"aGk="}}`, true},
		{"remember empty", `{"op":"remember","escalate":"","dir":"","memo":{}}`, true},
		{"recall", `{"op":"recall","escalate":"","dir":"","memo":{"sha256":"` + sum + `"}}`, true},
		{"remember without memo", `{"op":"remember","escalate":"","dir":""}`, false},
		{"remember under a hash of the sender's", `{"op":"remember","escalate":"","dir":"","memo":{"sha256":"` + sum + `","content":"aGk="}}`, false},
		{"recall with content", `{"op":"recall","escalate":"","dir":"","memo":{"sha256":"` + sum + `","content":"aGk="}}`, false},
		{"recall of no hash", `{"op":"recall","escalate":"","dir":"","memo":{"sha256":"../x"}}`, false},
		{"remember that escalates", `{"op":"remember","escalate":"danger-full-access","dir":"","memo":{"content":"aGk="}}`, false},
		{"remember with a write", `{"op":"remember","escalate":"","dir":"","memo":{"content":"aGk="},"write":{"path":"x","content":"aGk="}}`, false},
		{"a write with a memo", `{"op":"write","escalate":"danger-full-access","dir":"/","write":{"path":"x","content":"aGk="},"memo":{"content":"aGk="}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(tc.body))
			if (err == nil) != tc.ok {
				t.Errorf("DecodeRequest: %v, want ok %v", err, tc.ok)
			}
		})
	}
}
