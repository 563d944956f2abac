/*
 * kmain: bring the node up, start what registered itself (kernel/init.h),
 * then run the app named on the command line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "boot/boot.h"
#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/config.h"
#include "kernel/console.h"
#include "kernel/init.h"
#include "kernel/machine.h"
#include "kernel/mem.h"
#include "kernel/node.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/watchdog.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "kernel/vm.h"

extern const struct init_hook *const __inithooks_start[], *const __inithooks_end[];
extern void (*const __exithooks_start[])(void), (*const __exithooks_end[])(void);

uint64_t boot_tsc_app_start;

/* Run the init hooks of levels [lo, hi), in order. */
static void run_hooks(int lo, int hi)
{
	for (const struct init_hook *const *h = __inithooks_start; h < __inithooks_end; h++) {
		int r;
		if ((*h)->level < lo || (*h)->level >= hi)
			continue;
		r = (*h)->fn();
		if (r < 0 && r != -ENODEV)
			printf("%s: cannot start (error %d)\n", (*h)->name, r);
	}
}

void app_finish(int status)
{
	static int finishing;
	struct thread *t = thread_current();

	console_flush();
	if (t)
		t->conprog = 0;
	/* An exit hook that ends the app again (exit() in one) stops the node at once. */
	if (finishing++)
		kernel_exit(status);
	watchdog_watch(NULL);
	for (void (*const *h)(void) = __exithooks_start; h < __exithooks_end; h++)
		(*h)();
	printf("app: %s finished with status %d\n", current_app ? current_app->name : "?", status);
	kernel_exit(status);
}

static void *app_thread(void *arg)
{
	const struct app *a = arg;

	printf("app: %s starting on node %d of %d\n", a->name, node_id, num_nodes);
	boot_tsc_app_start = cycles();
	app_finish(a->main());
}

void kmain(uint32_t kind, uint32_t info)
{
	thread_init_boot();
	console_init();
	trap_init();
	printf("\nNOW node kernel\n");
	if (bootinfo_parse((int)kind, info) < 0)
		kernel_exit(EXIT_FAULT);
	console_start_late();
	static char shown[sizeof bootinfo.cmdline];
	config_redact(bootinfo.cmdline, shown, sizeof shown);
	printf("boot: %s loader, command line '%s'%s\n", bootinfo.loader, shown,
	       bootinfo.cmdline_truncated ? " (truncated)" : "");
	const struct bootinfo_fb *fb = &bootinfo.fb;
	if (fb->addr)
		printf("console: %s framebuffer %ux%u, %u bits a pixel, %u bytes a line, at %#lx%s\n",
		       bootinfo.efi ? "UEFI" : "BIOS", fb->width, fb->height, fb->bpp, fb->pitch, fb->addr,
		       fb->type != 1 ? " (text mode: VGA console)" :
		       console_active("framebuffer") ? "" : " (not drawn: a depth other than 16, 24 or 32 bits, or above 4 GiB)");

	memory_init();
	int tcg_split = vm_tcg_init();
	printf("mem: %lu MiB usable, heap %lu MiB at %#lx, %lu pages free%s%s%s\n",
	       mem_usable_bytes >> 20, (heap_end - heap_start) >> 20, heap_start, page_free_pages(),
	       bootinfo.mmap_source ? " (" : "", bootinfo.mmap_source ? bootinfo.mmap_source : "",
	       bootinfo.mmap_source ? ")" : "");

	acpi_init(bootinfo.rsdp);
	apic_init();
	tsc_calibrate();
	timer_init();
	printf("cpu: tsc %lu.%03lu MHz (calibrated against %s), lapic timer %lu MHz, %s%s\n",
	       tsc_hz / 1000000, (tsc_hz / 1000) % 1000, tsc_source, lapic_timer_hz / 1000000,
	       machine() ? "under " : "bare metal", machine() ? machine()->name : "");
	sti();

	run_hooks(0, INIT_CONFIG);
	if (config_init(bootinfo.cmdline) < 0 || bootinfo.cmdline_truncated) {
		if (bootinfo.cmdline_truncated)
			printf("cmdline: error: command line longer than %d bytes\n",
			       BOOTINFO_CMDLINE_MAX - 1);
		printf("cmdline: rejected; the node will not start\n");
		kernel_exit(EXIT_USAGE);
	}
	/*
	 * make iso and make netboot ask the image itself whether a PC would take
	 * their line (boot/tools/checkline: QEMU's fw_cfg file opt/now/check):
	 * read and checked as at any boot, and the node stops here.
	 */
	char check;
	if (machine() && machine()->file && machine()->file("opt/now/check", &check, 1) != -ENOENT) {
		printf("cmdline: accepted: app %s\n", current_app->name);
		kernel_exit(0);
	}
	run_hooks(INIT_CONFIG, 100);

	uint64_t t_grow = cycles();
	size_t tlb = vm_tlb_grow();
	if (tcg_split)
		printf("vm: QEMU TCG: RAM in 4 KiB pages (%d of 2 MiB split%s), its TLB grown toward %zu entries "
		       "in %lu us (kernel/vm.c), memcpy's twins %zu pages apart\n", tcg_split < 0 ? 0 : tcg_split,
		       tcg_split < 0 ? ": no memory for the tables" : "", tlb, cycles_to_ns(cycles() - t_grow) / 1000,
		       memcpy_tlb_pages);
	struct thread *app = thread_create("main", app_thread, (void *)current_app, PRIO_NORMAL, 256 * 1024);
	if (!app)
		panic("cannot create the app thread");
	watchdog_watch(app);
	thread_idle_loop();
}
