/*
 * swtch(prev, next): save the callee-saved registers and SSE state of
 * prev, load next's.  struct thread starts with rsp (offset 0) and the
 * fxsave area pointer (offset 8).  Called with interrupts off.
 */
	.text
	.code64
	.globl swtch
swtch:
	movq 8(%rdi), %rax
	fxsave64 (%rax)
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq (%rsi), %rsp
	movq 8(%rsi), %rax
	fxrstor64 (%rax)
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
