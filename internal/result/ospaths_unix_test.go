//go:build !windows

package result

import (
	"bytes"
	"testing"
)

// On Unix a path leaves the fence as it is: the rewrite of ospaths.go
// changes nothing, even a string a Windows fence path would be.
func TestOSPathsIdentityOnUnix(t *testing.T) {
	raw := []byte(`{"path":"/C:/ws","resolved":"/home/u/ws/a.txt","roots":["/C:/x"]}`)
	if got := osPathsJSON(raw); !bytes.Equal(got, raw) {
		t.Errorf("osPathsJSON changed %s to %s", raw, got)
	}
	for _, s := range []string{"/C:/ws/a.txt", "read /C:/ws/a.txt: no such file", "/home/u"} {
		if osPath(s) != s || osPathsIn(s) != s {
			t.Errorf("%q rewritten on Unix", s)
		}
	}
}
