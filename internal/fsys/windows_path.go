//go:build windows

package fsys

import "strings"

// FromOS is the fence's slash path of a Windows path: a drive path
// (`C:\x`, `c:/x`, `\\?\C:\x`) is "/C:/x", a relative one has its
// backslashes as slashes. A path the fence does not take is EINVAL: a
// UNC share (`\\server\share`, `\\?\UNC\…`), a device (`\\.\…`), a path
// relative to a drive's own folder (`C:x`) or rooted on no drive (`\x`).
// The fence's own spelling ("/", "/C:/x") is taken as it is. Names are
// not checked here: each is refused as it is opened (checkName).
func FromOS(p string) (string, error) {
	if strings.HasPrefix(p, `\\?\`) || strings.HasPrefix(p, `\??\`) {
		return FromNT(p)
	}
	s := strings.ReplaceAll(p, `\`, "/")
	switch {
	case strings.HasPrefix(s, "//"):
		return "", EINVAL
	case len(s) >= 2 && isDrive(s[:2]):
		if len(s) > 2 && s[2] != '/' {
			return "", EINVAL
		}
		return "/" + strings.ToUpper(s[:1]) + ":" + s[2:], nil
	case s == "/":
		return s, nil
	case len(s) >= 3 && s[0] == '/' && isDrive(s[1:3]) && (len(s) == 3 || s[3] == '/'):
		return "/" + strings.ToUpper(s[1:2]) + s[2:], nil // the fence's own spelling
	case strings.HasPrefix(s, "/"):
		return "", EINVAL
	case strings.Contains(strings.SplitN(s, "/", 2)[0], ":"):
		return "", EINVAL // "1:\x", a drive that is none
	}
	return s, nil
}

// ToOS is the Windows path of a fence's path: "/C:/x" is `C:\x`, "/C:"
// is `C:\`, "/" stays "/" (the fence's root, no Windows folder), a
// relative path has backslashes.
func ToOS(p string) string {
	if p == "/" {
		return p
	}
	s := strings.TrimPrefix(p, "/")
	if len(s) >= 2 && isDrive(s[:2]) && (len(s) == 2 || s[2] == '/') {
		if len(s) == 2 {
			return s + `\`
		}
		return strings.ReplaceAll(s, "/", `\`)
	}
	return strings.ReplaceAll(p, "/", `\`)
}
