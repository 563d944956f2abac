# NOW node image: the one entry point.
#
#   make              build/now.elf (fetches and builds picolibc on first use)
#   make run          boot a cluster: APP=, NODES=, NIC=, ARGS=, CLUSTER=
#   make test         every test level; ends with "N passed, N failed"
#   make iso          build/now.iso for GRUB (USB stick, spare PC); CMDLINE=
#   make qemu-gdb     one node waiting for gdb on :1234
#   make deps         check (as root: install) the Debian packages needed
#   make clean        remove build products (keeps downloads and picolibc)
#   make distclean    remove build/ entirely

BUILD   := build
CC      := gcc
LD      := ld
HOSTCC  := gcc
PYTHON  := python3

# Third-party sources: Debian source packages, checked by sha256 (DESIGN.md).
PICOLIBC_VER   := 1.8.10
PICOLIBC_DEB   := picolibc=1.8.10-2
PICOLIBC_TAR   := picolibc_$(PICOLIBC_VER).orig.tar.gz
PICOLIBC_SHA   := d1fc2a20f217472f8d9da084a519a25678e8d91852a41c7f3f1840d3508f7163
LWIP_VER       := 2.2.1
LWIP_DEB       := lwip=2.2.1+dfsg1-1+deb13u1
LWIP_TAR       := lwip_$(LWIP_VER)+dfsg1.orig.tar.xz
LWIP_SHA       := 83729c274c499d3348e9fbbe043a3113f3fa8953e7efddc7c21c7fcbb1f2b7b1
DEB_SUITE      := trixie
DEB_MIRROR     := http://deb.debian.org/debian

DL       := $(BUILD)/dl
PICOLIBC := $(BUILD)/picolibc
LIBC     := $(PICOLIBC)/lib/libc.a
LWIPDIR  := $(BUILD)/lwip-$(LWIP_VER)
LIBGCC   := $(shell $(CC) -print-libgcc-file-name)
GCCINC   := $(shell $(CC) -print-file-name=include)

# The kernel: freestanding, no red zone (interrupts push onto the current
# stack), frame pointers for backtraces, picolibc's headers only.
KCFLAGS := -std=gnu11 -O2 -g -ffreestanding -fno-pic -fno-pie -mno-red-zone \
	-mcmodel=small -fno-omit-frame-pointer -fno-stack-protector \
	-fno-asynchronous-unwind-tables -fno-common -Wall -Wextra \
	-Wno-unused-parameter -nostdinc -isystem $(PICOLIBC)/include \
	-isystem $(GCCINC) -I. -MMD -MP
KASFLAGS := -I. -MMD -MP
KLDFLAGS := -nostdlib -static -z max-page-size=4096 -z noexecstack --build-id=none \
	-T linker/kernel.ld

BOOT_OBJS := boot/entry.o

KERNEL_OBJS := \
	kernel/main.o \
	kernel/bootinfo.o \
	kernel/console.o \
	kernel/trap.o \
	kernel/trapasm.o \
	kernel/acpi.o \
	kernel/apic.o \
	kernel/tsc.o \
	kernel/timer.o \
	kernel/page.o \
	kernel/mem.o \
	kernel/vm.o \
	kernel/thread.o \
	kernel/swtch.o \
	kernel/sync.o \
	kernel/libc.o \
	kernel/panic.o \
	kernel/cmdline.o \
	kernel/config.o

DRIVER_OBJS := \
	drivers/uart.o \
	drivers/vga.o \
	drivers/qemu.o \
	drivers/pci.o

APP_OBJS := \
	apps/app.o \
	apps/hello.o \
	apps/fault.o \
	apps/selftest.o \
	apps/nictest.o

NET_OBJS := \
	net/pktbuf.o \
	net/netdev.o

OBJS := $(addprefix $(BUILD)/,$(BOOT_OBJS) $(KERNEL_OBJS) $(DRIVER_OBJS) $(NET_OBJS) $(APP_OBJS))

all: $(BUILD)/now.elf

# --- dependencies ----------------------------------------------------------

deps:
	@boot/deps.sh

# apt-get with a private configuration under build/apt: a deb-src entry for
# the suite that carries the pinned versions, without touching the host's
# apt sources and without needing root.
APT_DIR := $(BUILD)/apt
APT_OPTS = -o Dir::Etc::SourceList=$(CURDIR)/$(APT_DIR)/sources.list \
	-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$(CURDIR)/$(APT_DIR)/lists \
	-o Dir::Cache=$(CURDIR)/$(APT_DIR)/cache -o Debug::NoLocking=1 \
	-o APT::Sandbox::User=$(shell id -un)

$(APT_DIR)/lists/.updated:
	@mkdir -p $(APT_DIR)/lists/partial $(APT_DIR)/cache/archives/partial
	@echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(DEB_MIRROR) $(DEB_SUITE) main" \
		> $(APT_DIR)/sources.list
	@echo "  FETCH   Debian $(DEB_SUITE) source index"
	@apt-get $(APT_OPTS) -q update > $(APT_DIR)/update.log 2>&1 || \
		{ cat $(APT_DIR)/update.log; echo "error: cannot read the Debian source index ($(DEB_MIRROR)); see above" >&2; exit 1; }
	@touch $@

# fetch <debian-source-spec> <tarball> <sha256>
define fetch
	@mkdir -p $(DL)
	@if [ ! -f $(DL)/$(2) ]; then \
		echo "  FETCH   $(2)"; \
		cd $(DL) && apt-get $(APT_OPTS) -q source --download-only --tar-only $(1) > fetch.log 2>&1 || \
		{ cat fetch.log; echo "error: apt-get source $(1) failed" >&2; exit 1; }; \
	fi
	@echo "$(3)  $(DL)/$(2)" | sha256sum -c --quiet - || \
		{ echo "error: $(DL)/$(2) does not match its sha256; delete it and retry" >&2; exit 1; }
endef

$(DL)/$(PICOLIBC_TAR): | deps
	@$(MAKE) -s $(APT_DIR)/lists/.updated
	$(call fetch,$(PICOLIBC_DEB),$(PICOLIBC_TAR),$(PICOLIBC_SHA))
	@touch $@

$(DL)/$(LWIP_TAR): | deps
	@$(MAKE) -s $(APT_DIR)/lists/.updated
	$(call fetch,$(LWIP_DEB),$(LWIP_TAR),$(LWIP_SHA))
	@touch $@

# picolibc for bare-metal x86-64 with the host gcc (about 30 s).
$(LIBC): $(DL)/$(PICOLIBC_TAR)
	@echo "  BUILD   picolibc $(PICOLIBC_VER)"
	@rm -rf $(BUILD)/picolibc-src $(BUILD)/picolibc-build $(PICOLIBC)
	@mkdir -p $(BUILD)/picolibc-src
	@tar -xzf $< -C $(BUILD)/picolibc-src --strip-components=1
	@cd $(BUILD)/picolibc-src && meson setup ../picolibc-build \
		--cross-file scripts/cross-x86_64-linux-gnu.txt \
		-Dmultilib=false -Dtests=false -Dpicocrt=false -Dsemihost=false \
		-Dspecsdir=none -Dc_args=-mno-red-zone \
		--prefix=$(CURDIR)/$(PICOLIBC) -Dincludedir=include -Dlibdir=lib \
		> ../picolibc-setup.log 2>&1 || { cat ../picolibc-setup.log; exit 1; }
	@ninja -C $(BUILD)/picolibc-build install > $(BUILD)/picolibc-build.log 2>&1 || \
		{ tail -40 $(BUILD)/picolibc-build.log; exit 1; }
	@test -f $@

$(LWIPDIR)/.extracted: $(DL)/$(LWIP_TAR)
	@echo "  UNPACK  lwIP $(LWIP_VER)"
	@rm -rf $(LWIPDIR) && mkdir -p $(LWIPDIR)
	@tar -xJf $< -C $(LWIPDIR) --strip-components=1
	@touch $@

picolibc: $(LIBC)
lwip: $(LWIPDIR)/.extracted

# --- the kernel ------------------------------------------------------------

$(BUILD)/%.o: %.c | $(LIBC)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KCFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC) $(KASFLAGS) -c -o $@ $<

$(BUILD)/ksyms-empty.o:
	@mkdir -p $(dir $@)
	@printf '\t.section .ksyms, "a"\n' | $(CC) -c -x assembler -o $@ -

# Two links: the second carries the symbol table of the first (for
# backtraces).  .ksyms sits after all code and data, so no address moves;
# the check below makes sure of it.
$(BUILD)/now.elf: $(OBJS) $(BUILD)/ksyms-empty.o linker/kernel.ld linker/mksyms.sh $(LIBC)
	@echo "  LD      $@"
	@$(LD) $(KLDFLAGS) -o $@.pass1 $(OBJS) $(BUILD)/ksyms-empty.o $(LIBC) $(LIBGCC)
	@linker/mksyms.sh $@.pass1 > $(BUILD)/ksyms.S
	@$(CC) -c -o $(BUILD)/ksyms.o $(BUILD)/ksyms.S
	@$(LD) $(KLDFLAGS) -o $@ $(OBJS) $(BUILD)/ksyms.o $(LIBC) $(LIBGCC)
	@nm -n $@.pass1 | grep -i ' t ' > $(BUILD)/syms.pass1
	@nm -n $@ | grep -i ' t ' > $(BUILD)/syms.pass2
	@cmp -s $(BUILD)/syms.pass1 $(BUILD)/syms.pass2 || \
		{ echo "error: code moved between the two links" >&2; rm -f $@; exit 1; }
	@rm -f $@.pass1
	@size $@ | tail -1 | awk '{ printf "  SIZE    text %d data %d bss %d\n", $$1, $$2, $$3 }'

-include $(OBJS:.o=.d)

# --- running ---------------------------------------------------------------

APP     ?=
NODES   ?= 4
NIC     ?= virtio
ARGS    ?=
CLUSTER ?=

run: $(BUILD)/now.elf
	@boot/cluster --nodes $(NODES) --nic $(NIC) $(if $(APP),--app $(APP)) \
		$(if $(ARGS),--args "$(ARGS)") $(CLUSTER)

qemu-gdb: $(BUILD)/now.elf
	@boot/cluster --nodes 1 --gdb $(if $(APP),--app $(APP)) $(if $(ARGS),--args "$(ARGS)")

# --- ISO for GRUB ----------------------------------------------------------

CMDLINE ?= node=0 nodes=1 app=hello

$(BUILD)/now.iso: $(BUILD)/now.elf boot/grub.cfg.in
	@echo "  ISO     $@"
	@rm -rf $(BUILD)/iso && mkdir -p $(BUILD)/iso/boot/grub
	@cp $(BUILD)/now.elf $(BUILD)/iso/boot/now.elf
	@sed -e 's|@CMDLINE@|$(CMDLINE)|g' boot/grub.cfg.in > $(BUILD)/iso/boot/grub/grub.cfg
	@grub-mkrescue -o $@ $(BUILD)/iso > $(BUILD)/grub-mkrescue.log 2>&1 || \
		{ cat $(BUILD)/grub-mkrescue.log; exit 1; }

iso: $(BUILD)/now.iso

# --- tests -----------------------------------------------------------------

UNIT_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -DHOST_TEST -I. \
	-fsanitize=address,undefined -fno-omit-frame-pointer
UNIT_LIBS := -lcmocka

UNIT_TESTS := cmdline page
UNIT_BINS := $(addprefix $(BUILD)/tests/unit_,$(UNIT_TESTS))

$(BUILD)/tests/unit_cmdline: tests/unit/test_cmdline.c kernel/cmdline.c kernel/cmdline.h | deps
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) $(UNIT_CFLAGS) -o $@ tests/unit/test_cmdline.c kernel/cmdline.c $(UNIT_LIBS)

$(BUILD)/tests/unit_page: tests/unit/test_page.c kernel/page.c kernel/page.h | deps
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) $(UNIT_CFLAGS) -o $@ tests/unit/test_page.c kernel/page.c $(UNIT_LIBS)

unit: $(UNIT_BINS)

test: $(BUILD)/now.elf $(BUILD)/now.iso $(UNIT_BINS)
	@$(PYTHON) tests/run.py --build $(BUILD) $(UNIT_BINS)

# --- housekeeping ----------------------------------------------------------

clean:
	rm -rf $(BUILD)/boot $(BUILD)/kernel $(BUILD)/drivers $(BUILD)/net $(BUILD)/lib \
		$(BUILD)/apps $(BUILD)/tests $(BUILD)/iso $(BUILD)/*.o $(BUILD)/*.S \
		$(BUILD)/now.elf* $(BUILD)/now.iso $(BUILD)/syms.* $(BUILD)/bench

distclean:
	rm -rf $(BUILD)

.PHONY: all deps picolibc lwip run qemu-gdb iso unit test clean distclean
