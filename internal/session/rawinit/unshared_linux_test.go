package rawinit

import (
	"reflect"
	"testing"
)

// TestMemoryNamesEveryPointer: every field of readied that points to
// memory is either listed by memory (the first process reads it, so its
// fork keeps it) or the parent's alone. A new pointer field fails here
// until it is one or the other: left out of memory, the child that
// reads it faults on a page its fork did not copy.
func TestMemoryNamesEveryPointer(t *testing.T) {
	inMemory := map[string]bool{"files": true, "path": true, "dir": true, "argv": true, "envv": true,
		"procSource": true, "procTarget": true, "rulesets": true, "filters": true, "progs": true,
		"ops": true, "regs": true}
	parentOnly := map[string]bool{"argv0": true, "dirName": true, "opSpec": true, "unshared": true,
		"reportR": true, "endedR": true, "syncWFile": true, "reportW": true, "endedW": true, "syncRFile": true}
	unlisted(t, reflect.TypeFor[readied](), inMemory, parentOnly)
	// An op's: into and rights point inside its mem and msg's control.
	unlisted(t, reflect.TypeFor[rop](), map[string]bool{"procBuf": true, "mem": true, "msg": true},
		map[string]bool{"into": true, "rights": true})
}

// unlisted fails t for each field of typ that points to memory and is
// in neither listed nor other.
func unlisted(t *testing.T, typ reflect.Type, listed, other map[string]bool) {
	t.Helper()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if hasPointers(f.Type) && !listed[f.Name] && !other[f.Name] {
			t.Errorf("%s.%s (%s) points to memory: list it in memory, or here", typ.Name(), f.Name, f.Type)
		}
	}
}

// hasPointers says a value of t holds an address.
func hasPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.String, reflect.UnsafePointer, reflect.Map, reflect.Chan,
		reflect.Func, reflect.Interface:
		return true
	case reflect.Array:
		return hasPointers(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
