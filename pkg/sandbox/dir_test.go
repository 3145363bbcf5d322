package sandbox

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenat2Retries: a retry the kernel asks for (EAGAIN, EINTR) is made,
// but at most openat2MaxRetries times in all; any other answer is final.
func TestOpenat2Retries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers []error // one per call; the call after the last succeeds
		calls   int
		err     error
	}{
		{name: "first try", calls: 1},
		{name: "EAGAIN twice", answers: []error{unix.EAGAIN, unix.EAGAIN}, calls: 3},
		{name: "EINTR then EAGAIN", answers: []error{unix.EINTR, unix.EAGAIN}, calls: 3},
		{name: "EAGAIN until the bound", answers: repeatErr(unix.EAGAIN, openat2MaxRetries-1), calls: openat2MaxRetries},
		{name: "EAGAIN beyond the bound", answers: repeatErr(unix.EAGAIN, 1000), calls: openat2MaxRetries, err: errOpenat2Retries},
		{name: "EINTR beyond the bound", answers: repeatErr(unix.EINTR, 1000), calls: openat2MaxRetries, err: errOpenat2Retries},
		{name: "ELOOP is final", answers: []error{unix.ELOOP}, calls: 1, err: unix.ELOOP},
		{name: "ENOSYS is final", answers: []error{unix.ENOSYS}, calls: 1, err: unix.ENOSYS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			fakeOpenat2(t, func(int, string, *unix.OpenHow) (int, error) {
				calls++
				if calls <= len(tc.answers) {
					return -1, tc.answers[calls-1]
				}
				return 42, nil
			})
			fd, err := openat2(unix.AT_FDCWD, "x", resolveConfined)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Errorf("openat2 = %d, %v; want error %v", fd, err, tc.err)
			}
			if err == nil && fd != 42 {
				t.Errorf("openat2 = %d, want the fake's 42", fd)
			}
			if calls != tc.calls {
				t.Errorf("%d calls, want %d", calls, tc.calls)
			}
		})
	}
}

func repeatErr(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

// fakeOpenat2 replaces the openat2 system call for the test.
func fakeOpenat2(t *testing.T, f func(int, string, *unix.OpenHow) (int, error)) {
	t.Helper()
	saved := sysOpenat2
	sysOpenat2 = f
	t.Cleanup(func() { sysOpenat2 = saved })
}
