package plan

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// linuxWords name Linux's own mechanisms. The plan is the seam every
// platform's enforcer applies (docs/design.md §10), so a field outside
// Linux that says how Linux does a thing, rather than what is to hold,
// ties the others to Linux.
var linuxWords = []string{"landlock", "seccomp", "namespace", "mount", "cgroup", "capabilit", "uring",
	"procfs", "tmpfs", "overlayfs", "nodev", "nosuid", "prctl", "keyring", "ambient", "unshare"}

// planFields lists "Type.Field json" for each field of t and of the
// plan's own types it holds, but those of skip.
func planFields(t reflect.Type, skip reflect.Type, seen map[reflect.Type]bool) []string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeOf(Plan{}).PkgPath() || t == skip || seen[t] {
		return nil
	}
	seen[t] = true
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type == skip {
			continue
		}
		out = append(out, t.Name()+"."+f.Name+" "+f.Tag.Get("json"))
		out = append(out, planFields(f.Type, skip, seen)...)
	}
	return out
}

// linuxNamed are the fields of fields that use a word of linuxWords.
func linuxNamed(fields []string) []string {
	var out []string
	for _, f := range fields {
		lower := strings.ToLower(f)
		for _, w := range linuxWords {
			if strings.Contains(lower, w) {
				out = append(out, f+" ("+w+")")
			}
		}
	}
	return out
}

// TestPlanSpeaksNoLinux: no field of the plan but Linux's names a Linux
// mechanism. The control walks Linux too, whose io_uring it must find:
// were the walk blind, the check could not fail.
func TestPlanSpeaksNoLinux(t *testing.T) {
	linux := reflect.TypeOf(Linux{})
	fields := planFields(reflect.TypeOf(Plan{}), linux, map[reflect.Type]bool{})
	if len(fields) < 20 {
		t.Fatalf("the walk found only %d fields: %q", len(fields), fields)
	}
	if bad := linuxNamed(fields); len(bad) > 0 {
		t.Errorf("fields of the plan outside plan.Linux name Linux's mechanisms: %q; say what is to hold, or move the field into plan.Linux", bad)
	}
	if got := linuxNamed(planFields(reflect.TypeOf(Plan{}), nil, map[reflect.Type]bool{})); len(got) == 0 {
		t.Errorf("control: the walk of the whole plan finds no Linux word, not even plan.Linux's")
	}
}

// TestPlanRoundTrip: a plan survives its trip to the child as JSON, the
// file view's lists included, so the child applies what the supervisor
// planned.
func TestPlanRoundTrip(t *testing.T) {
	p := Plan{Path: "/bin/sh", Argv: []string{"sh"}, RestrictWrites: true, Writable: []string{"/w"}, Ctty: -1,
		Files: &Files{ReadOnly: []string{"/w/.git/config"}, Hidden: []string{"/s"}, Pinned: []string{"/w"},
			Overlays: []Overlay{{Path: "/c", Upper: "/r/u", Work: "/r/w"}}, View: &ReadView{Covered: []string{"/home"}}},
		Linux: Linux{IoUring: true}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back Plan
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, p)
	}
	if (Files{}).Empty() != true || p.Files.Empty() {
		t.Errorf("Empty: a zero view %v, a planned one %v", (Files{}).Empty(), p.Files.Empty())
	}
}
