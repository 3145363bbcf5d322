package fsops

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	ifsops "github.com/dshfs/dsh-fs/internal/fsops"
)

// TestResultsMatchTheCommand: each result type of this package has the
// JSON fields of the command's result it is copied from (call.go's
// public), in the same order with the same options, nested results
// included, so a field the command gains or renames cannot be dropped or
// misread here without this failing.
func TestResultsMatchTheCommand(t *testing.T) {
	for _, tc := range []struct{ public, internal reflect.Type }{
		{reflect.TypeFor[ReadResult](), reflect.TypeFor[ifsops.ReadResult]()},
		{reflect.TypeFor[WriteResult](), reflect.TypeFor[ifsops.WriteResult]()},
		{reflect.TypeFor[EditResult](), reflect.TypeFor[ifsops.EditResult]()},
		{reflect.TypeFor[PatchResult](), reflect.TypeFor[ifsops.PatchResult]()},
		{reflect.TypeFor[ListResult](), reflect.TypeFor[ifsops.ListResult]()},
		{reflect.TypeFor[StatResult](), reflect.TypeFor[ifsops.StatResult]()},
		{reflect.TypeFor[MkdirResult](), reflect.TypeFor[ifsops.MkdirResult]()},
		{reflect.TypeFor[MoveResult](), reflect.TypeFor[ifsops.MoveResult]()},
		{reflect.TypeFor[RemoveResult](), reflect.TypeFor[ifsops.RemoveResult]()},
	} {
		t.Run(tc.public.Name(), func(t *testing.T) {
			got, want := jsonFields(tc.public, ""), jsonFields(tc.internal, "")
			if len(want) < 2 {
				t.Fatalf("%v has %d JSON fields: the walk saw nothing", tc.internal, len(want))
			}
			if !slices.Equal(got, want) {
				t.Errorf("fields differ from the command's %v:\n got %v\nwant %v", tc.internal, got, want)
			}
		})
	}
}

// jsonFields lists the JSON fields of struct type t as encoding/json
// writes them: "prefix.name,options kind", embedded structs flattened,
// nested structs and slices of them walked.
func jsonFields(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if f.Anonymous && tag == "" && ft.Kind() == reflect.Struct {
			out = append(out, jsonFields(ft, prefix)...)
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, prefix+name+","+opts+" "+f.Type.Kind().String())
		if ft.Kind() == reflect.Struct {
			out = append(out, jsonFields(ft, prefix+name+".")...)
		}
	}
	return out
}
