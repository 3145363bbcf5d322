package rawinit

import (
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// Ops are a small program of raw system calls the first process runs
// right after its user namespace has its maps (the first thing it does
// after the fork otherwise), before its descriptors are placed: a
// caller that may not take a user namespace from a thread of its own
// (an ordinary user) has the session's mounts made there by these.
// Values flow from one op to the next through registers, a few
// descriptors of the readied struct, all -1 at first; every one still
// open after the last op is closed then. What the ops point to (strings,
// structs) is readied before the fork and kept alive; they run in order
// and the first failure ends the first process, reported as an *OpError.

// MaxRegisters is how many registers Ops may name.
const MaxRegisters = 64

// NoReg is an op's Result when its result is not kept.
const NoReg = -1

// OpKind is what an op does.
type OpKind uint8

const (
	// OpCall makes the system call Nr with Args; a result of Result
	// other than NoReg goes to that register. An errno equal to SkipOn
	// is no failure: it skips the next Skip ops.
	OpCall OpKind = iota
	// OpCheck fstats the descriptor in register Reg and fails unless
	// its type is one of Types.
	OpCheck
	// OpClose closes the descriptor in register Reg.
	OpClose
	// OpStore writes the value in register Reg, a C int, into the
	// memory of another op's Bytes argument (Into): a struct field
	// that op passes by pointer (mount_attr's userns_fd).
	OpStore
	// OpSend sends the descriptor in register Reg over the socket
	// Args[0] (a word or a register) with SCM_RIGHTS, one byte of data,
	// Args[1]'s low byte: a descriptor the ops made handed to the
	// caller (a terminal's master, a listener), which receives it once
	// Start returned.
	OpSend
)

// At is a place in the memory of op Op's argument Arg, a Bytes one, at
// byte Offset.
type At struct {
	Op, Arg, Offset int
}

// Types is a set of file types (S_IFDIR, S_IFREG, …) for OpCheck.
type Types uint16

// TypeSet is the set of the file types given as S_IF* values.
func TypeSet(types ...uint32) Types {
	var s Types
	for _, t := range types {
		s |= 1 << (t & unix.S_IFMT >> 12)
	}
	return s
}

// Op is one op of Spec.Ops; which fields count is its Kind's to say.
type Op struct {
	Kind OpKind
	// Nr and Args are an OpCall's system call; Result the register its
	// result goes to, or NoReg. SkipOn, when not 0, is the errno that
	// skips the next Skip ops instead of failing.
	Nr     uintptr
	Args   [6]Arg
	Result int
	SkipOn syscall.Errno
	Skip   int
	// Reg is the register an OpCheck, OpClose or OpStore takes; Types
	// the file types an OpCheck allows.
	Reg   int
	Types Types
	// Empty (OpCheck) also requires the file's size to be 0.
	Empty bool
	Into  At
	// Words say what the op was, in the caller's words ("mount: hide
	// /x: open_tree"): its failure is these, then the errno's text; a
	// failed OpCheck's is these alone.
	Words string
	// Changed, when not 0, is an errno of OpCall that means its path
	// is no longer what the caller planned (ELOOP from openat2 with
	// RESOLVE_NO_SYMLINKS): the failure then says so.
	Changed syscall.Errno
}

// Call is the op making system call nr with args (fewer than six: the
// rest 0), its result not kept.
func Call(nr uintptr, args ...Arg) Op {
	o := Op{Kind: OpCall, Nr: nr, Result: NoReg}
	copy(o.Args[:], args)
	return o
}

// Arg is one argument of an OpCall: a word, a register's value, or the
// address of memory readied before the fork.
type Arg struct {
	kind argKind
	v    uintptr
	b    []byte
}

type argKind uint8

const (
	argWord argKind = iota
	argReg
	argBytes
	argProcFD
)

// Word is the argument v as it is.
func Word(v uintptr) Arg { return Arg{kind: argWord, v: v} }

// Int is the argument v, a C int (AT_FDCWD, a descriptor).
func Int(v int) Arg { return Arg{kind: argWord, v: uintptr(v)} }

// Reg is the value of register i when the op runs.
func Reg(i int) Arg { return Arg{kind: argReg, v: uintptr(i)} }

// Str is the address of s as a C string.
func Str(s string) Arg { return Arg{kind: argBytes, b: append([]byte(s), 0)} }

// Bytes is the address of a copy of b (a struct's bytes: an open_how, a
// mount_attr); the op may have the kernel write there.
func Bytes(b []byte) Arg { return Arg{kind: argBytes, b: append([]byte{}, b...)} }

// ProcFD is the address of the C string /proc/self/fd/N, N the
// descriptor in register i when the op runs: a path the kernel resolves
// to the very file that descriptor is open on.
func ProcFD(i int) Arg { return Arg{kind: argProcFD, v: uintptr(i)} }

// OpError is the failure of op Op of Spec.Ops.
type OpError struct {
	Op    int
	Words string
	Errno syscall.Errno // 0 for a failed OpCheck
	// Changed says the op found its path no longer as planned.
	Changed bool
}

func (e *OpError) Error() string {
	switch {
	case e.Errno == 0:
		return e.Words
	case e.Changed:
		return e.Words + ": changed since the plan: " + e.Errno.Error()
	}
	return e.Words + ": " + e.Errno.Error()
}

func (e *OpError) Unwrap() error {
	if e.Errno == 0 {
		return nil
	}
	return e.Errno
}

// rop is an op readied: every address made, every register named by an
// index the child reads. The child writes only into the /proc/self/fd
// paths' buffers, which args point to.
type rop struct {
	kind    OpKind
	nr      uintptr
	args    [6]uintptr
	fromReg [6]int8 // the register whose value is the argument, or -1
	procFD  [6]int8 // the register whose /proc/self/fd path the argument's buffer gets, or -1
	procBuf [6]*[procFDLen]byte
	mem     [6][]byte // the Bytes arguments' memory
	result  int
	skipOn  uintptr
	skip    int
	reg     int
	types   Types
	empty   bool
	into    unsafe.Pointer // OpStore: where the int32 goes, in another op's mem
	msg     *unix.Msghdr   // OpSend: its message, whose rights are rights
	rights  *int32
}

// procFDPrefix begins every ProcFD path; its buffer holds the digits of
// any descriptor and the NUL.
const procFDPrefix = "/proc/self/fd/"

const procFDLen = len(procFDPrefix) + 12

// stepOps is the first op's step; op i is stepOps+i.
const stepOps uint32 = 1 << 16

// readyOps readies s.Ops in the arena, and what they point to, and
// says how many registers they name.
func (p *Pending) readyOps(s Spec) (regs int, err error) {
	r, a := p.r, p.a
	p.opSpec = s.Ops
	if len(s.Ops) == 0 {
		return 0, nil
	}
	if len(s.Ops) >= 1<<15 {
		return 0, fserr.New(fserr.InvalidArgument, "rawinit: too many ops")
	}
	r.ops = place[rop](a, len(s.Ops))
	reg := func(i int) bool {
		regs = max(regs, i+1)
		return i >= 0 && i < MaxRegisters
	}
	for i, o := range s.Ops {
		ro := &r.ops[i]
		*ro = rop{kind: o.Kind, nr: o.Nr, result: o.Result, skipOn: uintptr(o.SkipOn), skip: o.Skip, reg: o.Reg, types: o.Types, empty: o.Empty}
		bad := func(why string) (int, error) {
			return 0, fserr.New(fserr.InvalidArgument, "rawinit: op "+strconv.Itoa(i)+" ("+o.Words+"): "+why)
		}
		switch o.Kind {
		case OpCall:
			if o.Result != NoReg && !reg(o.Result) {
				return bad("no such register")
			}
			if o.Skip < 0 || i+o.Skip >= len(s.Ops) {
				return bad("skips past the end")
			}
		case OpCheck, OpClose:
			if !reg(o.Reg) {
				return bad("no such register")
			}
		case OpSend:
			if !reg(o.Reg) {
				return bad("no such register")
			}
			if o.Args[0].kind != argWord && o.Args[0].kind != argReg || o.Args[1].kind != argWord {
				return bad("sends over no socket")
			}
			ro.msg, ro.rights = sendMsg(a, byte(o.Args[1].v))
		case OpStore:
			if !reg(o.Reg) {
				return bad("no such register")
			}
			if !storable(s.Ops, o.Into) {
				return bad("stores into no Bytes argument of an op")
			}
		default:
			return bad("no such kind")
		}
		for j, a := range o.Args {
			ro.fromReg[j], ro.procFD[j] = -1, -1
			switch a.kind {
			case argWord:
				ro.args[j] = a.v
			case argReg, argProcFD:
				if !reg(int(a.v)) {
					return bad("no such register")
				}
				if a.kind == argReg {
					ro.fromReg[j] = int8(a.v)
					break
				}
				buf := placeOne[[procFDLen]byte](p.a)
				copy(buf[:], procFDPrefix)
				ro.procBuf[j] = buf
				ro.args[j], ro.procFD[j] = uintptr(unsafe.Pointer(buf)), int8(a.v)
			case argBytes:
				buf := placeCopy(p.a, a.b)
				if len(buf) == 0 {
					buf = place[byte](p.a, 1)
				}
				ro.mem[j] = buf
				ro.args[j] = uintptr(unsafe.Pointer(&buf[0]))
			}
		}
	}
	for i, o := range s.Ops {
		if o.Kind == OpStore {
			at := o.Into
			r.ops[i].into = unsafe.Pointer(&r.ops[at.Op].mem[at.Arg][at.Offset])
		}
	}
	return regs, nil
}

// storable reports whether at is 4 aligned bytes of an op's Bytes
// argument.
func storable(ops []Op, at At) bool {
	if at.Op < 0 || at.Op >= len(ops) || at.Arg < 0 || at.Arg >= 6 {
		return false
	}
	a := ops[at.Op].Args[at.Arg]
	return ops[at.Op].Kind == OpCall && a.kind == argBytes && at.Offset >= 0 && at.Offset%4 == 0 && at.Offset+4 <= len(a.b)
}

// opFailure is the error of op i of the spec, failed with errno.
func (p *Pending) opFailure(i int, errno syscall.Errno) error {
	if i < 0 || i >= len(p.opSpec) {
		return fserr.Wrap(fserr.IO, "rawinit: an unknown op: "+errno.Error(), errno)
	}
	o := p.opSpec[i]
	e := &OpError{Op: i, Words: o.Words, Errno: errno, Changed: o.Changed != 0 && errno == o.Changed}
	if o.Kind == OpCheck {
		e.Errno = 0
	}
	return fserr.Wrap(fserr.IO, e.Error(), e)
}

// runOps runs the ops in order; each one's step is stepOps+its index,
// so a failure names it. It closes every register still open after.
//
//go:nosplit
//go:norace
//go:nocheckptr
func runOps(r *readied) syscall.Errno {
	for r.opAt = 0; r.opAt < len(r.ops); r.opAt++ {
		o := &r.ops[r.opAt]
		r.step = stepOps + uint32(r.opAt)
		switch o.kind {
		case OpCall:
			for j := 0; j < 6; j++ {
				r.opArgs[j] = o.args[j]
				if o.fromReg[j] >= 0 {
					r.opArgs[j] = uintptr(r.regs[o.fromReg[j]])
				}
				if o.procFD[j] >= 0 {
					procFDPath(o.procBuf[j], r.regs[o.procFD[j]])
				}
			}
			v, _, e := syscall.RawSyscall6(o.nr, r.opArgs[0], r.opArgs[1], r.opArgs[2], r.opArgs[3], r.opArgs[4], r.opArgs[5])
			if e != 0 && o.skipOn != 0 && uintptr(e) == o.skipOn {
				r.opAt += o.skip
				continue
			}
			if e != 0 {
				return e
			}
			if o.result >= 0 {
				r.regs[o.result] = int(v)
			}
		case OpCheck:
			if _, _, e := syscall.RawSyscall(unix.SYS_FSTAT, uintptr(r.regs[o.reg]), uintptr(unsafe.Pointer(&r.stat)), 0); e != 0 {
				return e
			}
			if o.types&(1<<(r.stat.Mode&unix.S_IFMT>>12)) == 0 || o.empty && r.stat.Size != 0 {
				return syscall.ESTALE // the check's own failure: opFailure says its words alone
			}
		case OpClose:
			syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(r.regs[o.reg]), 0, 0)
			r.regs[o.reg] = -1
		case OpStore:
			*(*int32)(o.into) = int32(r.regs[o.reg])
		case OpSend:
			sock := o.args[0]
			if o.fromReg[0] >= 0 {
				sock = uintptr(r.regs[o.fromReg[0]])
			}
			*o.rights = int32(r.regs[o.reg])
			if _, _, e := syscall.RawSyscall(unix.SYS_SENDMSG, sock, uintptr(unsafe.Pointer(o.msg)), 0); e != 0 {
				return e
			}
		}
	}
	for i := 0; i < len(r.regs); i++ {
		if r.regs[i] >= 0 && r.kept&(1<<i) == 0 {
			syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(r.regs[i]), 0, 0)
			r.regs[i] = -1
		}
	}
	return 0
}

// procFDPath writes fd's digits and a NUL after the /proc/self/fd/
// prefix of p.
//
//go:nosplit
//go:norace
//go:nocheckptr
func procFDPath(p *[procFDLen]byte, fd int) {
	n := 1
	for v := fd; v >= 10; v /= 10 {
		n++
	}
	if fd < 0 { // a register never set: a name no descriptor has, so the call fails
		p[len(procFDPrefix)], p[len(procFDPrefix)+1] = '-', 0
		return
	}
	p[len(procFDPrefix)+n] = 0
	for i := n - 1; i >= 0; i-- {
		p[len(procFDPrefix)+i] = byte('0' + fd%10)
		fd /= 10
	}
}

// sendMsg is an OpSend's message, readied in a: one byte of data, tag,
// and room for one descriptor's rights, which the child writes at
// rights.
func sendMsg(a *arena, tag byte) (*unix.Msghdr, *int32) {
	data := placeCopy(a, []byte{tag})
	oob := place[uint64](a, (unix.CmsgSpace(4)+7)/8) // aligned for the header
	ctl := unsafe.Slice((*byte)(unsafe.Pointer(&oob[0])), unix.CmsgSpace(4))
	copy(ctl, unix.UnixRights(0))
	rights := (*int32)(unsafe.Pointer(&ctl[unix.CmsgLen(0)]))
	iov := placeOne[unix.Iovec](a)
	iov.Base = &data[0]
	iov.SetLen(1)
	msg := placeOne[unix.Msghdr](a)
	msg.Iov, msg.Iovlen, msg.Control = iov, 1, &ctl[0]
	msg.SetControllen(len(ctl))
	return msg, rights
}

// Send is the op sending the descriptor in register reg over the socket
// sock, with tag as its one byte of data (OpSend).
func Send(reg int, sock Arg, tag byte, words string) Op {
	return Op{Kind: OpSend, Reg: reg, Args: [6]Arg{sock, Word(uintptr(tag))}, Words: words}
}
