package rawinit

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// TestArenaHoldsEverything: every value the first process reads, a
// spec's every kind of field and op readied, lies in the arena, which is
// all of the caller's memory it is handed (the rest of the heap is left
// out of its fork, and what is written after the fork reaches it only
// there). A field readied on the heap fails here: the child reading it
// would fault, or read what was there at its fork.
func TestArenaHoldsEverything(t *testing.T) {
	a, err := newArena()
	if err != nil {
		t.Fatal(err)
	}
	defer a.unmap()
	p := &Pending{a: a, r: placeOne[readied](a), parent: -1}
	p.r.ended, p.r.parent = -1, -1
	mattr := make([]byte, 32)
	s := Spec{Path: "/bin/sh", Argv: []string{"sh", "-c", "true"}, Env: []string{"A=1", "B=2"}, Dir: "/tmp",
		Init: true, MountProc: true, Session: true, Ctty: -1, Files: []int{0, 1, FromReg(3)},
		Layers: Layers{JoinKeyring: true, Rulesets: []int{7, 8}, DropPrivileges: &Privileges{LastCap: 40},
			Filters: [][]unix.SockFilter{{{Code: 6}}, {{Code: 6}, {Code: 6}}}},
		Ops: []Op{
			{Kind: OpCall, Nr: unix.SYS_OPEN_TREE, Args: [6]Arg{Int(unix.AT_FDCWD), Str("/x"), Word(1)}, Result: 0},
			{Kind: OpCall, Nr: unix.SYS_MOUNT_SETATTR, Args: [6]Arg{Reg(0), Str(""), Word(0), Bytes(mattr), Word(32)}, Result: NoReg},
			{Kind: OpStore, Reg: 0, Into: At{Op: 1, Arg: 3, Offset: 24}},
			{Kind: OpCall, Nr: unix.SYS_OPENAT, Args: [6]Arg{Int(unix.AT_FDCWD), ProcFD(0), Word(0)}, Result: 3},
			{Kind: OpCheck, Reg: 3, Types: TypeSet(unix.S_IFDIR)},
			Send(3, Int(9), 'm', "send"),
			{Kind: OpClose, Reg: 0},
		}}
	if err := p.ready(s); err != nil {
		t.Fatal(err)
	}
	walk(t, a, "readied", reflect.ValueOf(p.r).Elem())
	for i := range p.r.ops {
		o := &p.r.ops[i]
		for j := range o.args {
			if (o.mem[j] != nil || o.procBuf[j] != nil) && !a.holds(o.args[j], 1) {
				t.Errorf("op %d's argument %d is an address outside the arena", i, j)
			}
		}
		if o.rights != nil && !a.holds(uintptr(unsafe.Pointer(o.rights)), 4) {
			t.Errorf("op %d's rights lie outside the arena", i)
		}
	}
	if a.full {
		t.Error("the arena was full")
	}
}

// holds says the n bytes at address p lie in the arena.
func (a *arena) holds(p, n uintptr) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(a.mem)))
	return p >= lo && p+n <= lo+uintptr(len(a.mem))
}

// walk fails t for every address in v that is not in a, following those
// that are.
func walk(t *testing.T, a *arena, path string, v reflect.Value) {
	t.Helper()
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if !a.holds(v.Pointer(), v.Type().Elem().Size()) {
			t.Errorf("%s points outside the arena", path)
			return
		}
		walk(t, a, path+"→", v.Elem())
	case reflect.UnsafePointer:
		if p := v.Pointer(); p != 0 && !a.holds(p, 1) {
			t.Errorf("%s points outside the arena", path)
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		if !a.holds(v.Pointer(), uintptr(v.Len())*v.Type().Elem().Size()) {
			t.Errorf("%s's elements lie outside the arena", path)
			return
		}
		for i := range v.Len() {
			walk(t, a, path+"[]", v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			walk(t, a, path+"[]", v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			walk(t, a, path+"."+v.Type().Field(i).Name, v.Field(i))
		}
	case reflect.String, reflect.Map, reflect.Chan, reflect.Func, reflect.Interface:
		if !v.IsZero() {
			t.Errorf("%s (%s) is the Go heap's: the child cannot read it", path, v.Type())
		}
	}
}

// TestArenaFull: a spec too large for the arena is refused before
// anything is handed over, with InvalidArgument.
func TestArenaFull(t *testing.T) {
	a, err := newArena()
	if err != nil {
		t.Fatal(err)
	}
	defer a.unmap()
	p := &Pending{a: a, r: placeOne[readied](a), parent: -1}
	quarter := strings.Repeat("x", arenaSize/4)
	err = p.ready(Spec{Path: "/bin/true", Argv: []string{"true"}, Env: []string{quarter, quarter, quarter, quarter}, Ctty: -1})
	if fserr.CodeOf(err) != fserr.InvalidArgument || !a.full {
		t.Fatalf("an environment of the arena's size readied: %v", err)
	}
}
