package kernel

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The seccomp filters dsh-fs installs are assembled here, over
// unix.SockFilter, rather than by a seccomp library: the one used before
// (go-seccomp-bpf) built its tables of every architecture's syscall names
// at package init, about 165 KB and a tenth of a millisecond or more, in
// every call of the CLI, while only exec's child ever installs a filter.
// The programs are the ones that library assembled for the
// same rules, instruction for instruction (seccompasm_test.go compares
// them with it).

// lowWordRule refuses one syscall, with errno, when the low 32 bits of
// its argument arg are any of values, whatever the high 32 bits (the
// kernel reads that argument as a 32-bit int, so a value with high bits
// set is the same value). Every other call is allowed.
type lowWordRule struct {
	syscall uint32
	arg     uint32
	values  []uint32
	errno   unix.Errno
}

// seccompArch is the running architecture as a seccomp filter checks it:
// its audit arch, and whether it is amd64, whose x32 ABI shares the audit
// arch and is told by a bit in the syscall number.
type seccompArch struct {
	audit uint32
	amd64 bool
}

// nativeSeccompArch is the seccomp architecture of this build; ok is
// false where none is known.
func nativeSeccompArch() (seccompArch, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return seccompArch{audit: unix.AUDIT_ARCH_X86_64, amd64: true}, true
	case "arm64":
		return seccompArch{audit: unix.AUDIT_ARCH_AARCH64}, true
	case "386":
		return seccompArch{audit: unix.AUDIT_ARCH_I386}, true
	case "arm":
		return seccompArch{audit: unix.AUDIT_ARCH_ARM}, true
	case "riscv64":
		return seccompArch{audit: unix.AUDIT_ARCH_RISCV64}, true
	case "ppc64le":
		return seccompArch{audit: unix.AUDIT_ARCH_PPC64LE}, true
	case "s390x":
		return seccompArch{audit: unix.AUDIT_ARCH_S390X}, true
	case "loong64":
		return seccompArch{audit: unix.AUDIT_ARCH_LOONGARCH64}, true
	}
	return seccompArch{}, false
}

// Offsets in struct seccomp_data, and the x32 ABI's bit in a syscall
// number.
const (
	seccompNrAt   = 0
	seccompArchAt = 4
	seccompArgsAt = 16
	x32SyscallBit = 0x40000000
)

// littleEndian says how a 64-bit argument lies in seccomp_data: which of
// its two 32-bit words a filter loads first.
var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

// program assembles the rule for arch: the arch checked (another one is
// allowed: a filter binds one ABI), on amd64 the x32 ABI refused whole
// with ENOSYS, then the syscall and, for each value, "no bit outside the
// value is set, and every bit of it is" on the argument's low word, as
// two tests each on the high word (always 0) and the low one.
func (r lowWordRule) program(arch seccompArch) ([]unix.SockFilter, error) {
	a := newBPFAsm()
	allow, refuse := a.newLabel(), a.newLabel()
	a.load(seccompArchAt)
	a.jump(unix.BPF_JEQ, arch.audit, a.fallThrough(), allow)
	a.load(seccompNrAt)
	if arch.amd64 {
		native := a.newLabel()
		a.jump(unix.BPF_JGE, x32SyscallBit, a.fallThrough(), native)
		a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
		a.place(native)
	}
	a.jump(unix.BPF_JEQ, r.syscall, a.fallThrough(), allow)
	for i, v := range r.values {
		nextValue := allow
		if i < len(r.values)-1 {
			nextValue = a.newLabel()
		}
		// The bits that must be clear, then each bit that must be set:
		// the library's BitsNotSet(^v) followed by BitsSet(bit).
		tests := []struct {
			set  bool
			mask uint32
		}{{false, ^v}}
		for rest := v; rest != 0; rest &= rest - 1 {
			tests = append(tests, struct {
				set  bool
				mask uint32
			}{true, rest & -rest})
		}
		for j, t := range tests {
			nextTest := refuse
			if j < len(tests)-1 {
				nextTest = a.newLabel()
			}
			a.load(r.argAt(false))
			// The high word of the mask is 0 (it is a 32-bit value), so
			// this test never jumps; it is kept so that the program is
			// the one the library made.
			if t.set {
				a.jump(unix.BPF_JSET, 0, nextTest, a.fallThrough())
			} else {
				a.jump(unix.BPF_JSET, 0, nextValue, a.fallThrough())
			}
			a.load(r.argAt(true))
			if t.set {
				a.jump(unix.BPF_JSET, t.mask, nextTest, nextValue)
			} else {
				a.jump(unix.BPF_JSET, t.mask, nextValue, nextTest)
			}
			if j < len(tests)-1 {
				a.place(nextTest)
			}
		}
		if i < len(r.values)-1 {
			a.place(nextValue)
		}
	}
	a.place(refuse)
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(r.errno))
	a.place(allow)
	a.ret(unix.SECCOMP_RET_ALLOW)
	return a.assemble()
}

// argAt is the offset in seccomp_data of the low (low true) or high word
// of the rule's argument.
func (r lowWordRule) argAt(low bool) uint32 {
	off := seccompArgsAt + 8*r.arg
	if low != littleEndian {
		off += 4
	}
	return off
}

// SeccompSupported reports whether this kernel takes seccomp filters:
// asking for strict mode with a flag that mode does not take is EINVAL
// where seccomp(2) exists, and changes nothing.
func SeccompSupported() bool {
	_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_STRICT, 1, 0)
	return e == unix.EINVAL
}

// bpfAsm assembles a classic BPF program with forward jumps to labels.
type bpfAsm struct {
	prog   []unix.SockFilter
	fixups []bpfFixup
	// at is each label's instruction, -1 until placed.
	at []int
}

// bpfLabel names an instruction a jump goes to, placed later.
type bpfLabel int

// bpfFixup is a jump whose offsets wait for its labels.
type bpfFixup struct {
	index  int
	jt, jf bpfLabel
}

func newBPFAsm() *bpfAsm { return &bpfAsm{} }

func (a *bpfAsm) newLabel() bpfLabel {
	a.at = append(a.at, -1)
	return bpfLabel(len(a.at) - 1)
}

// place puts label l at the next instruction.
func (a *bpfAsm) place(l bpfLabel) { a.at[l] = len(a.prog) }

// fallThrough is a label placed at the instruction after the next one,
// the jump that names it: offset 0.
func (a *bpfAsm) fallThrough() bpfLabel {
	l := a.newLabel()
	a.at[l] = len(a.prog) + 1
	return l
}

// load loads the 32-bit word at off of seccomp_data.
func (a *bpfAsm) load(off uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

// jump compares the loaded word with k by op (unix.BPF_JEQ, BPF_JGE,
// BPF_JSET) and goes to jt when true, jf when false.
func (a *bpfAsm) jump(op uint16, k uint32, jt, jf bpfLabel) {
	a.fixups = append(a.fixups, bpfFixup{index: len(a.prog), jt: jt, jf: jf})
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

// ret ends the program with the seccomp action k.
func (a *bpfAsm) ret(k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
}

// assemble resolves every jump: a label not placed, behind its jump, or
// more than 255 instructions ahead is an error (none of dsh-fs's filters
// comes near).
func (a *bpfAsm) assemble() ([]unix.SockFilter, error) {
	skip := func(from int, l bpfLabel) (uint8, error) {
		to := a.at[l]
		n := to - from - 1
		if to < 0 || n < 0 || n > 255 {
			return 0, fmt.Errorf("bpf: jump from %d to label %d (instruction %d) out of range", from, l, to)
		}
		return uint8(n), nil
	}
	for _, f := range a.fixups {
		jt, err := skip(f.index, f.jt)
		if err != nil {
			return nil, err
		}
		jf, err := skip(f.index, f.jf)
		if err != nil {
			return nil, err
		}
		a.prog[f.index].Jt, a.prog[f.index].Jf = jt, jf
	}
	if len(a.prog) == 0 || len(a.prog) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("bpf: %d instructions", len(a.prog))
	}
	return a.prog, nil
}
