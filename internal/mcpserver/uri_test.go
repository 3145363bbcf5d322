package mcpserver

import (
	"fmt"
	"strings"
	"testing"
)

// nodeEncoded are the ASCII bytes Node 20 and 22's url.pathToFileURL
// percent-encodes in a path (every other byte over 0x7f too): asked of
// node for each of 1–127, as the official server makes read_media_file's
// URI.
const nodeEncoded = " \"#%<>?[\\]^`{|}~\x7f"

// TestFileURIAsNode: each byte is encoded exactly where Node encodes it.
func TestFileURIAsNode(t *testing.T) {
	for c := 1; c < 256; c++ {
		if c == '/' {
			continue
		}
		got := fileURI("/x" + string([]byte{byte(c)}) + "y")
		want := "file:///x" + string([]byte{byte(c)}) + "y"
		if c < 0x20 || c >= 0x7f || strings.IndexByte(nodeEncoded, byte(c)) >= 0 {
			want = fmt.Sprintf("file:///x%%%02Xy", c)
		}
		if got != want {
			t.Errorf("byte %#x: %q, want %q", c, got, want)
		}
	}
	if got := fileURI("/tmp/my café.bin"); got != "file:///tmp/my%20caf%C3%A9.bin" {
		t.Errorf("my café.bin: %q", got)
	}
}
