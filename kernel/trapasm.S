/*
 * Interrupt entry stubs.  Each vector pushes an error code (a zero where the
 * CPU pushes none) and its number, then trap_common saves the general
 * registers and the SSE state (picolibc and the kernel use SSE; a handler
 * must not clobber the interrupted thread's registers) and calls trap().
 */
	.text
	.code64

.macro VEC_NOERR n
	.balign 16
vec\n:
	pushq $0
	pushq $\n
	jmp trap_common
.endm

.macro VEC_ERR n
	.balign 16
vec\n:
	pushq $\n
	jmp trap_common
.endm

/* Intel SDM vol. 3, 6.3.1: vectors that push an error code. */
.altmacro
.macro VEC n
	.if (\n == 8) || (\n == 10) || (\n == 11) || (\n == 12) || (\n == 13) || (\n == 14) || (\n == 17) || (\n == 21) || (\n == 29) || (\n == 30)
	VEC_ERR %n
	.else
	VEC_NOERR %n
	.endif
.endm

	.set i, 0
	.rept 256
	VEC %i
	.set i, i + 1
	.endr

trap_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	cld
	movq %rsp, %r12			/* struct trapframe * */
	subq $512, %rsp
	andq $-16, %rsp
	fxsave64 (%rsp)
	movq %r12, %rdi
	call trap
	fxrstor64 (%rsp)
	movq %r12, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	addq $16, %rsp			/* vector, error code */
	iretq

	.section .rodata
	.balign 8
	.globl trap_vectors
trap_vectors:
.macro VECADDR n
	.quad vec\n
.endm
	.set i, 0
	.rept 256
	VECADDR %i
	.set i, i + 1
	.endr
