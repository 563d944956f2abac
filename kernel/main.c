/*
 * kmain: bring the node up, then run the app named on the command line.
 */
#include <stdio.h>
#include <string.h>

#include "apps/app.h"
#include "boot/boot.h"
#include "drivers/pci.h"
#include "drivers/qemu.h"
#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/bootinfo.h"
#include "kernel/config.h"
#include "kernel/console.h"
#include "kernel/mem.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/thread.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/tsc.h"
#include "kernel/x86.h"
#include "net/fabric/fabric.h"
#include "net/deposit/deposit.h"
#include "net/req/req.h"
#include "net/rmem/rmem.h"
#include "net/lwip/lwip_port.h"
#include "net/net.h"

uint64_t boot_tsc_app_start;

static void *app_thread(void *arg)
{
	const struct app *a = arg;
	int status;

	printf("app: %s starting on node %d of %d\n", a->name, node_id, num_nodes);
	boot_tsc_app_start = cycles();
	status = a->main();
	console_flush();
	/* Nothing this node sent may be lost because it stopped. */
	fabric_shutdown(3000000000ULL, 100000000ULL);
	printf("app: %s finished with status %d\n", a->name, status);
	kernel_exit(status);
}

void kmain(uint32_t kind, uint32_t info)
{
	thread_init_boot();
	console_init();
	trap_init();
	printf("\nNOW node kernel\n");
	if (bootinfo_parse((int)kind, info) < 0)
		kernel_exit(EXIT_FAULT);
	if (kind == BOOT_MULTIBOOT2)
		console_enable_vga();
	printf("boot: %s loader, command line '%s'%s\n", bootinfo.loader, bootinfo.cmdline,
	       bootinfo.cmdline_truncated ? " (truncated)" : "");

	memory_init();
	printf("mem: %lu MiB usable, heap %lu MiB at %#lx, %lu pages free\n",
	       mem_usable_bytes >> 20, (heap_end - heap_start) >> 20, heap_start, page_free_pages());

	acpi_init(bootinfo.rsdp);
	apic_init();
	tsc_calibrate();
	timer_init();
	printf("cpu: tsc %lu.%03lu MHz (calibrated against %s), lapic timer %lu MHz, %s\n",
	       tsc_hz / 1000000, (tsc_hz / 1000) % 1000, tsc_source, lapic_timer_hz / 1000000,
	       qemu_detect() ? "under QEMU" : "bare metal");
	sti();

	pci_init();

	if (config_init(bootinfo.cmdline) < 0 || bootinfo.cmdline_truncated) {
		if (bootinfo.cmdline_truncated)
			printf("cmdline: error: command line longer than %d bytes\n",
			       BOOTINFO_CMDLINE_MAX - 1);
		printf("cmdline: rejected; the node will not start\n");
		kernel_exit(EXIT_USAGE);
	}

	if (net_init() == 0) {
		if (fabric_init() < 0)
			printf("fabric: cannot start\n");
		else if (rmem_init() < 0 || req_init() < 0)
			printf("rmem/req: cannot start\n");
		else if (deposit_init() < 0)
			printf("deposit: cannot start\n");
		/* Every kernel protocol has its handler: deliver what waited for one. */
		fabric_start();
	}
	if (net_up() && lwip_port_init() < 0)
		printf("lwip: cannot start\n");

	if (!thread_create("main", app_thread, (void *)current_app, PRIO_NORMAL, 256 * 1024))
		panic("cannot create the app thread");
	thread_idle_loop();
}
