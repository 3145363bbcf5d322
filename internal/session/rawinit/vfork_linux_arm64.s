#include "textflag.h"

// func rawVfork(flags uintptr) (pid, errno uintptr)
//
// clone(flags) where flags hold CLONE_VM|CLONE_VFORK: the child runs on
// the caller's stack until it executes or exits, while the caller's
// thread waits. The return address stays in the link register, which
// the child's return does not change for the caller.
TEXT ·rawVfork(SB),NOSPLIT,$0-24
	MOVD	flags+0(FP), R0
	MOVD	$0, R1
	MOVD	$0, R2
	MOVD	$0, R3
	MOVD	$0, R4
	MOVD	$0, R5
	MOVD	$220, R8	// SYS_clone
	SVC
	CMN	$4095, R0
	BCC	ok
	MOVD	$-1, R4
	MOVD	R4, pid+8(FP)
	NEG	R0, R0
	MOVD	R0, errno+16(FP)
	RET
ok:
	MOVD	R0, pid+8(FP)
	MOVD	ZR, errno+16(FP)
	RET
