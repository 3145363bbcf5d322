package kernel

import (
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// libraryProgram is what go-seccomp-bpf, the library dsh-fs used before
// its own assembler (seccompasm.go), assembles for rule on this machine's
// architecture: the rule spelled in its terms, as the code it replaced
// spelled it (EPERM is its plain ActionErrno).
func libraryProgram(t *testing.T, name string, rule lowWordRule) []unix.SockFilter {
	t.Helper()
	var conds []seccomp.NameWithConditions
	for _, v := range rule.values {
		c := seccomp.ArgumentConditions{{Argument: rule.arg, Operation: seccomp.BitsNotSet, Value: uint64(^v)}}
		for rest := v; rest != 0; rest &= rest - 1 {
			c = append(c, seccomp.Condition{Argument: rule.arg, Operation: seccomp.BitsSet, Value: uint64(rest & -rest)})
		}
		conds = append(conds, seccomp.NameWithConditions{Name: name, Conditions: c})
	}
	action := seccomp.ActionErrno
	if rule.errno != unix.EPERM {
		action |= seccomp.Action(rule.errno)
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls:      []seccomp.SyscallGroup{{Action: action, NamesWithCondtions: conds}},
	}
	insts, err := policy.Assemble()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		out[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	return out
}

// TestSeccompProgramsMatchLibrary: each filter dsh-fs installs is, on this
// architecture, the program go-seccomp-bpf assembled for the same rule,
// instruction for instruction; and so is a rule of three values, one of
// them 0 (no bit to set), to cover the jumps between values.
func TestSeccompProgramsMatchLibrary(t *testing.T) {
	arch, ok := nativeSeccompArch()
	if !ok {
		t.Skipf("no seccomp architecture for %s", runtime.GOARCH)
	}
	for _, tc := range []struct {
		name, syscall string
		rule          lowWordRule
	}{
		{"terminal injection", "ioctl", lowWordRule{syscall: unix.SYS_IOCTL, arg: 1, values: terminalInjection, errno: unix.EPERM}},
		{"multipath tcp", "socket", lowWordRule{syscall: unix.SYS_SOCKET, arg: 2, values: []uint32{unix.IPPROTO_MPTCP}, errno: unix.EPROTONOSUPPORT}},
		{"three values", "ioctl", lowWordRule{syscall: unix.SYS_IOCTL, arg: 0, values: []uint32{0xffffffff, 0, 0x80000001}, errno: unix.EACCES}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.rule.program(arch)
			if err != nil {
				t.Fatal(err)
			}
			want := libraryProgram(t, tc.syscall, tc.rule)
			if len(got) != len(want) {
				t.Fatalf("%d instructions, the library's %d:\n got %v\nwant %v", len(got), len(want), got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("instruction %d: %+v, the library's %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// TestSeccompProgramRuns runs the terminal injection program through
// x/net/bpf's interpreter on seccomp_data records: the refusal for each
// request, high bits or not, and the allow for other requests, other
// syscalls, another architecture and (on amd64) ENOSYS for the x32 ABI.
func TestSeccompProgramRuns(t *testing.T) {
	arch, ok := nativeSeccompArch()
	if !ok {
		t.Skipf("no seccomp architecture for %s", runtime.GOARCH)
	}
	prog, err := lowWordRule{syscall: unix.SYS_IOCTL, arg: 1, values: terminalInjection, errno: unix.EPERM}.program(arch)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]bpf.RawInstruction, len(prog))
	for i, p := range prog {
		raw[i] = bpf.RawInstruction{Op: p.Code, Jt: p.Jt, Jf: p.Jf, K: p.K}
	}
	insts, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("program does not disassemble")
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	data := func(auditArch, nr uint32, arg1 uint64) []byte {
		var d struct {
			nr, arch uint32
			ip       uint64
			args     [6]uint64
		}
		d.nr, d.arch, d.args[1] = nr, auditArch, arg1
		b := unsafe.Slice((*byte)(unsafe.Pointer(&d)), unsafe.Sizeof(d))
		// x/net/bpf loads words big-endian, as packets are; the kernel
		// loads them in the machine's order.
		out := make([]byte, len(b))
		for i := 0; i+4 <= len(b); i += 4 {
			w := *(*uint32)(unsafe.Pointer(&b[i]))
			out[i], out[i+1], out[i+2], out[i+3] = byte(w>>24), byte(w>>16), byte(w>>8), byte(w)
		}
		return out
	}
	refuse, allow := unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM), uint32(unix.SECCOMP_RET_ALLOW)
	cases := []struct {
		name      string
		in        []byte
		want      uint32
		onlyAMD64 bool
	}{
		{"TIOCSTI", data(arch.audit, unix.SYS_IOCTL, unix.TIOCSTI), refuse, false},
		{"TIOCSTI with high bits", data(arch.audit, unix.SYS_IOCTL, 0xdead<<32|unix.TIOCSTI), refuse, false},
		{"TIOCLINUX", data(arch.audit, unix.SYS_IOCTL, unix.TIOCLINUX), refuse, false},
		{"TIOCGWINSZ", data(arch.audit, unix.SYS_IOCTL, unix.TIOCGWINSZ), allow, false},
		{"TIOCSTI with a bit more", data(arch.audit, unix.SYS_IOCTL, unix.TIOCSTI|0x100000), allow, false},
		{"another syscall", data(arch.audit, unix.SYS_READ, unix.TIOCSTI), allow, false},
		{"another architecture", data(arch.audit^1, unix.SYS_IOCTL, unix.TIOCSTI), allow, false},
		{"x32", data(arch.audit, x32SyscallBit|unix.SYS_IOCTL, unix.TIOCGWINSZ), unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS), true},
	}
	for _, tc := range cases {
		if tc.onlyAMD64 && !arch.amd64 {
			continue
		}
		got, err := vm.Run(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if uint32(got) != tc.want {
			t.Errorf("%s: %#x, want %#x", tc.name, got, tc.want)
		}
	}
}

// TestBPFAsmRefusesBadJumps: a label never placed, one behind its jump,
// and one more than 255 instructions ahead are errors, never a program
// that jumps somewhere else.
func TestBPFAsmRefusesBadJumps(t *testing.T) {
	t.Run("not placed", func(t *testing.T) {
		a := newBPFAsm()
		a.load(0)
		a.jump(unix.BPF_JEQ, 1, a.fallThrough(), a.newLabel())
		a.ret(0)
		if _, err := a.assemble(); err == nil || !strings.Contains(err.Error(), "out of range") {
			t.Fatalf("assemble: %v, want out of range", err)
		}
	})
	t.Run("backward", func(t *testing.T) {
		a := newBPFAsm()
		back := a.newLabel()
		a.place(back)
		a.load(0)
		a.jump(unix.BPF_JEQ, 1, back, a.fallThrough())
		a.ret(0)
		if _, err := a.assemble(); err == nil {
			t.Fatal("a backward jump assembled")
		}
	})
	t.Run("too far", func(t *testing.T) {
		a := newBPFAsm()
		far := a.newLabel()
		a.load(0)
		a.jump(unix.BPF_JEQ, 1, far, a.fallThrough())
		for range 256 {
			a.load(0)
		}
		a.place(far)
		a.ret(0)
		if _, err := a.assemble(); err == nil {
			t.Fatal("a jump of 256 assembled")
		}
	})
	t.Run("empty", func(t *testing.T) {
		if _, err := newBPFAsm().assemble(); err == nil {
			t.Fatal("an empty program assembled")
		}
	})
}

// TestSeccompSupported gives the library's answer on this kernel.
func TestSeccompSupported(t *testing.T) {
	if got, want := SeccompSupported(), seccomp.Supported(); got != want {
		t.Fatalf("SeccompSupported %v, go-seccomp-bpf's Supported %v", got, want)
	}
}

// TestCompatProgramAsWritten: the 32-bit ABI's filter, assembled, is the
// program once written out by hand, instruction for instruction.
func TestCompatProgramAsWritten(t *testing.T) {
	const (
		ldW = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	if !littleEndian {
		t.Skip("the written program loads the low word of a little-endian machine")
	}
	want := []unix.SockFilter{
		{Code: ldW, K: 4},
		{Code: jeq, K: unix.AUDIT_ARCH_I386, Jt: 0, Jf: 5},
		{Code: ldW, K: 0},
		{Code: jeq, K: 54, Jt: 0, Jf: 3},
		{Code: ldW, K: 24},
		{Code: jeq, K: unix.TIOCSTI, Jt: 2, Jf: 0},
		{Code: jeq, K: unix.TIOCLINUX, Jt: 1, Jf: 0},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	}
	got, err := compatProgram(unix.AUDIT_ARCH_I386, 54)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("compatProgram =\n%v\nwant\n%v", got, want)
	}
}
