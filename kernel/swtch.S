/*
 * swtch(prev, next): save the callee-saved registers of prev, load next's.
 * struct thread starts with rsp (offset 0) and the FPU area pointer
 * (offset 8).  Called with interrupts off.
 *
 * swtch is a function call, so by the x86-64 System V ABI (section 3.2.1)
 * the only floating-point state its caller expects to survive is the
 * control part: the x87 control word and MXCSR's control bits.  The XMM
 * registers, the status bits and the x87 stack (empty across a call) are
 * the caller's to lose.  So those two words are all swtch keeps, at their
 * fxsave offsets (0 and 24) in the thread's FPU area.  A thread preempted
 * in an interrupt keeps its whole SSE state in the trap frame, saved on
 * entry and restored on exit (trapasm.S).  fxsave and fxrstor cost about
 * 750 ns together under QEMU's TCG, most of a switch.
 */
	.text
	.code64
	.globl swtch
swtch:
	movq 8(%rdi), %rax
	fnstcw (%rax)
	stmxcsr 24(%rax)
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq (%rsi), %rsp
	movq 8(%rsi), %rax
	fldcw (%rax)
	ldmxcsr 24(%rax)
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret

/* First code of every new thread: swtch "returns" here. */
	.globl thread_start
thread_start:
	xorq %rbp, %rbp
	call thread_entry
	ud2
