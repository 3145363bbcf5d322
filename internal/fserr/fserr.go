// Package fserr gives every dsh-fs failure a stable code that travels from
// where the failure happens up to the JSON result and the exit status.
package fserr

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Code is a stable, documented error code. Codes are API: new ones may be
// added, existing ones are never renamed.
type Code string

// The error codes of docs/design.md §6.
const (
	SandboxDenied   Code = "FS_SANDBOX_DENIED"
	NotFound        Code = "FS_NOT_FOUND"
	IsDir           Code = "FS_IS_DIR"
	NotDir          Code = "FS_NOT_DIR"
	Binary          Code = "FS_BINARY"
	TooLarge        Code = "FS_TOO_LARGE"
	EditNoMatch     Code = "FS_EDIT_NO_MATCH"
	EditAmbiguous   Code = "FS_EDIT_AMBIGUOUS"
	Stale           Code = "FS_STALE"
	Exists          Code = "FS_EXISTS"
	Permission      Code = "FS_PERMISSION"
	NoSpace         Code = "FS_NO_SPACE"
	InvalidArgument Code = "FS_INVALID_ARGUMENT"
	ConfigInvalid   Code = "FS_CONFIG_INVALID"
	IO              Code = "FS_IO"
	// AuditBroken is an audit log whose chain does not hold: a line
	// removed, changed or moved (dsh-fs audit verify).
	AuditBroken Code = "FS_AUDIT_BROKEN"
)

// Coder is implemented by every error that knows its code.
type Coder interface {
	Code() Code
}

// Error is a failure with a code, a message for people and models, and
// optionally the cause, a structured detail and a hint for recovery.
type Error struct {
	code Code
	// Msg is the complete lowercase message, without a final period.
	Msg string
	// Hint tells the caller what it can do about the failure, if anything.
	Hint string
	// Detail is operation-specific structured data rendered under
	// "detail" in the JSON error (match line numbers, a closest match…).
	Detail any
	// Err is the underlying cause, kept for errors.Is and errors.As.
	Err error
}

// New returns an Error with the given code and message.
func New(code Code, msg string) *Error { return &Error{code: code, Msg: msg} }

// Wrap returns an Error with the given code and message whose cause is err.
func Wrap(code Code, msg string, err error) *Error {
	return &Error{code: code, Msg: msg, Err: err}
}

func (e *Error) Error() string { return e.Msg }

// Code returns the error's stable code.
func (e *Error) Code() Code { return e.code }

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code carried by err, FromOS's classification of an
// operating-system error, or IO for an error that carries none (a bug to
// fix by giving it a code where it happens).
func CodeOf(err error) Code {
	var c Coder
	if errors.As(err, &c) {
		return c.Code()
	}
	return classify(err)
}

// FromOS wraps an operating-system error with the code that fits its errno
// and the message "<what>: <path>: <reason>". A nil err gives nil.
func FromOS(what, path string, err error) error {
	if err == nil {
		return nil
	}
	var c Coder
	if errors.As(err, &c) {
		return err
	}
	reason := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		reason = pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		reason = le.Err.Error()
	}
	msg := what + ": " + path + ": " + reason
	if path == "" {
		msg = what + ": " + reason
	}
	return Wrap(classify(err), msg, err)
}

// classify is the one table from an operating-system error to its code
// (docs/design.md §6, Error codes): what no case names is IO.
func classify(err error) Code {
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return NotFound
	case errors.Is(err, fs.ErrExist):
		return Exists
	case errors.As(err, &errno):
		switch errno {
		case syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG:
			return NoSpace
		case syscall.EROFS, syscall.EACCES, syscall.EPERM, syscall.ETXTBSY:
			return Permission
		case syscall.EISDIR:
			return IsDir
		case syscall.ENOTDIR:
			return NotDir
		case syscall.ENAMETOOLONG:
			// A path or name longer than the kernel takes is the
			// caller's bad input, like a bad flag: usage.
			return InvalidArgument
		}
		// EINVAL falls through to IO: the kernel refused an argument
		// dsh-fs itself passed (a read of a file with no read, a name the
		// file system refuses, a move the kernel will not make). That is
		// an I/O failure (exit 1), not bad usage (exit 2): the bad input
		// dsh-fs can tell, it detects itself and reports as
		// InvalidArgument before any system call.
	case errors.Is(err, fs.ErrPermission):
		return Permission
	}
	return IO
}
