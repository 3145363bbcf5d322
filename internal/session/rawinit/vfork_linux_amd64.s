#include "textflag.h"

// func rawVfork(flags uintptr) (pid, errno uintptr)
//
// clone(flags) where flags hold CLONE_VM|CLONE_VFORK: the child runs on
// the caller's stack until it executes or exits, while the caller's
// thread waits. The return address is kept in a register across the
// call, since the child's return pops it from the stack they share.
TEXT ·rawVfork(SB),NOSPLIT|NOFRAME,$0-24
	MOVQ	flags+0(FP), DI
	MOVQ	$0, SI
	MOVQ	$0, DX
	MOVQ	$0, R10
	MOVQ	$0, R8
	MOVQ	$0, R9
	MOVQ	$56, AX	// SYS_clone
	POPQ	R12
	SYSCALL
	PUSHQ	R12
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$-1, pid+8(FP)
	NEGQ	AX
	MOVQ	AX, errno+16(FP)
	RET
ok:
	MOVQ	AX, pid+8(FP)
	MOVQ	$0, errno+16(FP)
	RET
