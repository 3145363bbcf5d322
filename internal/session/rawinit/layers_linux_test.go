package rawinit

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// writeRights are the rights the test's ruleset handles: writing a
// file, making one, removing one.
const writeRights = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE

// writableOnly is a Landlock ruleset that lets files be written beneath
// dir alone; the test skips where the kernel has no Landlock.
func writableOnly(t *testing.T, dir string) int {
	t.Helper()
	attr := unix.LandlockRulesetAttr{Handled_access_fs: writeRights}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		t.Skipf("no Landlock here: %v", e)
	}
	t.Cleanup(func() { unix.Close(int(fd)) })
	d, err := unix.Open(dir, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(d)
	rule := unix.LandlockPathBeneathAttr{Allowed_access: writeRights, Parent_fd: int32(d)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&rule)), 0, 0, 0); e != 0 {
		t.Fatal(e)
	}
	return int(fd)
}

// refusingMkdir is a seccomp program that refuses mkdir and mkdirat
// with EPERM and allows the rest, on this architecture only.
func refusingMkdir(t *testing.T) []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
	)
	arch, mkdir := uint32(unix.AUDIT_ARCH_X86_64), uint32(83) // amd64's mkdir
	if runtime.GOARCH == "arm64" {
		arch, mkdir = unix.AUDIT_ARCH_AARCH64, unix.SYS_MKDIRAT // arm64 has mkdirat alone
	}
	return []unix.SockFilter{
		{Code: ld, K: 4}, // seccomp_data.arch
		{Code: jeq, Jt: 1, K: arch},
		{Code: ret, K: unix.SECCOMP_RET_KILL_PROCESS},
		{Code: ld, K: 0}, // seccomp_data.nr
		{Code: jeq, Jt: 2, K: unix.SYS_MKDIRAT},
		{Code: jeq, Jt: 1, K: mkdir},
		{Code: ret, K: unix.SECCOMP_RET_ALLOW},
		{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)},
	}
}

// status is the field of /proc/self/status of this process named.
func status(t *testing.T, field string) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return ""
}

// TestLayersHold: in CMD, a write outside the ruleset's folder is
// refused, mkdir is refused by the filter, and no capability is left;
// the test process that started it keeps all of them.
func TestLayersHold(t *testing.T) {
	needRoot(t)
	in, out := t.TempDir(), t.TempDir()
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		t.Skipf("no cap_last_cap: %v", err)
	}
	last, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for _, init := range []bool{true, false} {
		t.Run("init "+strconv.FormatBool(init), func(t *testing.T) {
			os.Remove(filepath.Join(in, "f"))
			s, stdout := shell(t, `cd "$1"; echo in > f && echo wrote-in; (echo out > "$2/f") 2>&- || echo refused-out
				mkdir d 2>&- || echo refused-mkdir; grep -E '^(Cap(Eff|Prm|Bnd|Amb)|NoNewPrivs):' /proc/self/status`)
			s.Argv = append(s.Argv, "sh", in, out)
			s.Init = init
			s.Layers = Layers{JoinKeyring: true, Rulesets: []int{writableOnly(t, in)},
				DropPrivileges: &Privileges{LastCap: last}, Filters: [][]unix.SockFilter{refusingMkdir(t)}}
			got, code, _ := run(t, s, stdout)
			want := "wrote-in\nrefused-out\nrefused-mkdir\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\n" +
				"CapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\n"
			if code != 0 || !strings.HasSuffix(got, want) {
				t.Errorf("CMD (status %d) said:\n%s\nwant its end:\n%s", code, got, want)
			}
			if _, err := os.Stat(filepath.Join(out, "f")); err == nil {
				t.Errorf("CMD wrote outside its ruleset's folder")
			}
			if _, err := os.Stat(filepath.Join(in, "d")); err == nil {
				t.Errorf("CMD made a folder the filter refuses")
			}
		})
	}
	// The layers were the first process's: the test writes, makes a
	// folder and keeps its capabilities.
	if err := os.WriteFile(filepath.Join(out, "g"), nil, 0o600); err != nil {
		t.Errorf("the test process is restricted after Start: %v", err)
	}
	if err := os.Mkdir(filepath.Join(out, "d"), 0o700); err != nil {
		t.Errorf("the test process is filtered after Start: %v", err)
	}
	if status(t, "CapEff") == "0000000000000000" || status(t, "NoNewPrivs") != "0" {
		t.Errorf("the test process lost its privileges: CapEff %s, NoNewPrivs %s", status(t, "CapEff"), status(t, "NoNewPrivs"))
	}
}
