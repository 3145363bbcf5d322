package seatbelt

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// The expressions are compiled on first use, not as the package is
// initialized: every dsh-fs process links this package, and only a
// Seatbelt session's start lints a profile.

// lexical matches a path spelled through one of macOS's symlinks at the
// root (/tmp, /var, /etc lead to /private/…): in a rule it would
// silently match nothing, as the kernel matches the resolved path.
var lexical = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[^/A-Za-z0-9._-])/(tmp|var|etc)(/|$|[^A-Za-z0-9._-])`)
})

// quoted matches a string of the profile: "…" or #"…".
var quoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`#?"[^"]*"`) })

// Lint checks a profile against the mistakes that make Seatbelt refuse
// it or match nothing: a string (of the text, or a parameter's value)
// over MaxString bytes, a lexical /tmp, /var or /etc path, a parameter
// the text does not read or read but not given, and (allow default). It
// changes nothing.
func Lint(prof *Profile) error {
	if !strings.HasPrefix(prof.Text, "(version 1)\n(deny default)\n") {
		return fmt.Errorf("the profile does not start (version 1) (deny default)")
	}
	if strings.Contains(strings.Join(strings.Fields(prof.Text), " "), "(allow default") {
		return fmt.Errorf("the profile allows by default")
	}
	for _, s := range quoted().FindAllString(prof.Text, -1) {
		if len(s) > MaxString {
			return fmt.Errorf("a string of the profile is %d bytes, over %d", len(s), MaxString)
		}
		if lexical().MatchString(s) {
			return fmt.Errorf("the profile spells %s through a symlink (/tmp, /var, /etc are /private/…)", s)
		}
	}
	given := map[string]bool{}
	for _, p := range prof.Params {
		if len(p.Value) > MaxString || len(p.Name) > MaxString {
			return fmt.Errorf("parameter %.40s is over %d bytes", p.Name, MaxString)
		}
		if lexical().MatchString(p.Value) {
			return fmt.Errorf("parameter %s=%s is spelled through a symlink (/tmp, /var, /etc are /private/…)", p.Name, p.Value)
		}
		if given[p.Name] {
			return fmt.Errorf("parameter %s is given twice", p.Name)
		}
		given[p.Name] = true
		if !strings.Contains(prof.Text, `(param "`+p.Name+`")`) {
			return fmt.Errorf("parameter %s is not read by the profile", p.Name)
		}
	}
	for _, m := range paramRef().FindAllStringSubmatch(prof.Text, -1) {
		if !given[m[1]] {
			return fmt.Errorf("the profile reads parameter %s, which is not given", m[1])
		}
	}
	return nil
}

// paramRef matches a parameter read by the profile.
var paramRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(param "([^"]*)"\)`) })
