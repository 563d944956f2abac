# NOW node image: the one entry point.
#
#   make              build/now.elf and the test image build/now-test.elf (fetches and builds picolibc on first use)
#   make run          boot a cluster: APP=, NODES=, NIC=, ARGS=, CLUSTER=
#   make test         every test level; ends with "N passed, N failed"
#   make iso          build/now.iso for GRUB, BIOS and UEFI (USB stick, spare PC); CMDLINE=, KEY=
#   make netboot      build/netboot/, a TFTP root for PXE (BIOS) and UEFI network boot
#   make bench        latency/bandwidth suite: table + build/bench/results.json
#   make cost         instructions per operation and stage (QEMU -icount), against tests/cost/budgets
#   make trace        one operation at a time, stamped at every stage on both nodes (APP=ops NIC=links ITERS=)
#   make papers       the four papers' own figures beside ours (e1000 and shm), with ratios
#   make speedup      a parallel app's speedup over 1, 2, 4 and 8 nodes (APP=ising or circuit, ARGS=, NIC=)
#   make key          a fresh random cluster key for KEY= (make run, iso, netboot)
#   make mpi-test     MPICH's own test suite judges lib/mpi (MPI_TESTS=, NIC=, FAULT=, DRIVER=)
#   make mpi-rma      MPICH's rma tests the windows must pass, on shm, then virtio and e1000 with 2 % drop+dup
#   make netpipe      NetPIPE's NPmpi (Debian's netpipe source) built with boot/mpicc: build/netpipe/NPmpi.elf
#   make user         build/user/now-user.o, what boot/mpicc links a program with
#   make qemu-gdb     one node waiting for gdb on :1234
#   make unit         the host unit tests alone (make test runs them too)
#   make fuzz         every fuzz target for FUZZ_SECONDS (600) each; make fuzz-build builds them
#   make soak         hostile, fault, racing and watchdog cases 10 times each beside a busy CPU
#   make deps         check (as root: install) the Debian packages needed, and QEMU 10 from backports
#   make clean        remove build products (keeps downloads, picolibc and build/bench's results)
#   make clean-bench  remove build/bench (make bench's results and plots)
#   make distclean    remove build/ entirely
#   make help         this list

SHELL   := /bin/bash
BUILD   := build

# The variables this Makefile documents (make help).  make's variables are case-sensitive:
# one of them spelt in lower case on the command line (make run app=hello) would be
# ignored, silently; it is refused with its spelling instead.
DOC_VARS := APP NODES NIC ARGS CLUSTER CMDLINE KEY ITERS PEERS STEPS VARY FAULT DRIVER ACCEL \
	TRACE LTO BENCH_ITERS BENCH_NICS BENCH_SWITCH COST_LINKS MPI_TESTS PAPERS_ITERS NETBOOT_DIR
lc = $(subst A,a,$(subst B,b,$(subst C,c,$(subst D,d,$(subst E,e,$(subst F,f,$(subst G,g,$(subst \
	H,h,$(subst I,i,$(subst J,j,$(subst K,k,$(subst L,l,$(subst M,m,$(subst N,n,$(subst O,o,$(subst \
	P,p,$(subst Q,q,$(subst R,r,$(subst S,s,$(subst T,t,$(subst U,u,$(subst V,v,$(subst W,w,$(subst \
	X,x,$(subst Y,y,$(subst Z,z,$1))))))))))))))))))))))))))
$(foreach v,$(DOC_VARS),$(if $(filter command line,$(origin $(call lc,$v))),$(error \
	$(call lc,$v)= is not one of this Makefile's variables: they are upper case, $v= (make help))))

# KEY= is read by make iso, netboot, run, bench, trace and cost (and make key prints one);
# given with any other goal it would be ignored, so it is refused.
KEY_GOALS := iso netboot run bench trace cost key images %.iso %netboot %netboot-test
ifeq ($(origin KEY),command line)
ifneq ($(filter-out $(KEY_GOALS),$(or $(MAKECMDGOALS),all)),)
$(error KEY= applies to make iso, netboot, run, bench, trace and cost, not to make \
	$(filter-out $(KEY_GOALS),$(or $(MAKECMDGOALS),all)))
endif
endif

.SECONDEXPANSION:
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
# MPICH's own test suite (test/mpi), the judge of lib/mpi (make mpi-test).
MPICH_VER      := 4.0.2
MPICH_DEB      := mpich=4.0.2-3
MPICH_TAR      := mpich_$(MPICH_VER).orig.tar.xz
MPICH_SHA      := b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
MPICH_SUITE    := bookworm
# NetPIPE (Debian's netpipe source): its NPmpi built with boot/mpicc, unmodified.
NETPIPE_VER    := 3.7.2
NETPIPE_DEB    := netpipe=3.7.2-8
NETPIPE_TAR    := netpipe_$(NETPIPE_VER).orig.tar.gz
NETPIPE_SHA    := 13dac884ff52951636f651c421f5ff4a853218a95aa28a4a852402ee385a2ab8
NETPIPE_SUITE  := bookworm
DEB_SUITE      := trixie
DEB_MIRROR     := http://deb.debian.org/debian

DL       := $(BUILD)/dl
PICOLIBC := $(BUILD)/picolibc
LIBC     := $(PICOLIBC)/lib/libc.a
LWIPDIR  := $(BUILD)/lwip-$(LWIP_VER)
LIBGCC   := $(shell $(CC) -print-libgcc-file-name)
GCCINC   := $(shell $(CC) -print-file-name=include)

# The kernel: freestanding, no red zone (interrupts push onto the current
# stack), frame pointers for backtraces, picolibc's headers only.  -O3:
# under QEMU's TCG every return and indirect call is a lookup of the next
# translated block (a third of the host's time in a spinning round trip
# on the shared-memory link), so the inlining -O3 adds shows in wall-clock
# time as well as in instructions (make cost: 5-17 % fewer than -O2).
KCFLAGS := -std=gnu11 -O3 -g -ffreestanding -fno-pic -fno-pie -mno-red-zone \
	-mcmodel=small -fno-omit-frame-pointer -fno-stack-protector \
	-fno-asynchronous-unwind-tables -fno-common -Wall -Wextra \
	-Werror=implicit-function-declaration -Wno-unused-parameter -nostdinc -isystem $(PICOLIBC)/include \
	-isystem $(GCCINC) -MMD -MP -include kernel/builtins.h
# make TRACE=0: every file's stage stamps compiled out (kernel/trace.h).
ifeq ($(TRACE),0)
KCFLAGS += -DLOCAL_TRACE=0
endif
KASFLAGS := -MMD -MP
KLDFLAGS := -nostdlib -static -z max-page-size=4096 -z noexecstack --build-id=none \
	-T linker/kernel.ld
# Link-time optimisation (make LTO=0 turns it off):
# the hot paths cross files (rmem -> fabric -> channel -> netdev -> driver)
# and LTO inlines across them; make cost counts 8-18 % fewer instructions.
# One partition: with two, where the partitions split moved with the
# order of the objects, and a call across the split is never inlined
# (one partition: every row of make cost 1-50 instructions fewer; a
# link of about 30 s).
LTO      ?= 1
KLD      := $(LD) $(KLDFLAGS)
ifeq ($(LTO),1)
KCFLAGS += -flto
# The link compiles the code: the kernel's -O and code-generation flags, the same as KCFLAGS's.
KLD      := $(CC) $(filter-out -flto,$(filter -O% -f% -m%,$(KCFLAGS))) -flto=2 -flto-partition=one -no-pie -nostdlib \
	-static -Wl,-z,max-page-size=4096 -Wl,-z,noexecstack -Wl,--build-id=none -T linker/kernel.ld
endif

BOOT_OBJS := boot/entry.o

KERNEL_OBJS := $(addprefix kernel/,main.o bootinfo.o console.o trap.o trapasm.o acpi.o acpi_s5.o apic.o calib.o tsc.o \
	timer.o page.o mem.o vm.o thread.o swtch.o sync.o libc.o memcpy.o posix.o files.o panic.o cmdline.o config.o \
	crc.o incarnation.o cmos.o siphash.o scrypt.o trace.o watchdog.o machine.o counters.o)

DRIVER_OBJS := $(addprefix drivers/,uart.o vga.o fbcon.o qemu.o pci.o pktbuf.o netdev.o intel_nic.o e1000.o igb.o virtio.o virtio_net.o \
	ivshmem.o)

# The user apps, in build/now.elf and the ISO (apps/README.md).
APP_OBJS := $(addprefix apps/,app.o stats.o hello.o selftest.o ising.o ising_core.o rpc_table.o tour.o circuit.o \
	circuit_net.o circuit_sim.o circuit_ring.o circuit_cmb.o)

# The test image's own apps (build/now-test.elf): the tests make test runs
# and the benchmarks of make bench, trace and cost, each in the folder of
# the feature it tests (tests/README.md); what they share is in tests/apps
# (the check, the protocol numbers) and tests/bench (the bench harness, the
# floor, one operation at a time).
TEST_APP_OBJS := tests/apps/check.o tests/kernel/fault.o tests/drivers/nictest.o \
	tests/net/fabric/fabric_stress.o tests/net/fabric/fabric_junk.o tests/net/fabric/peer_timeout.o \
	tests/net/fabric/rejoin.o tests/drivers/rx_starve.o tests/net/rmem/rmem_test.o tests/net/rmem/busy_send.o tests/lib/rpc/rpc_test.o \
	tests/lib/mad/mad_test.o tests/lib/mad/mad_figure6.o tests/lib/mad/mad_recover.o \
	tests/net/req/req_stress.o tests/net/deposit/deposit_test.o tests/net/deposit/deposit_test_common.o \
	tests/net/deposit/deposit_test_prim.o tests/net/deposit/deposit_test_hostile.o \
	tests/net/deposit/deposit_test_group.o tests/net/lwip/lwip_pin.o tests/net/call/barrier_forge.o \
	tests/bench/bench.o tests/bench/pingpong.o tests/bench/floor_line.o tests/bench/stages.o \
	tests/bench/ops.o tests/bench/ops_tcp.o tests/bench/cost.o tests/net/rmem/rmem_bench.o \
	tests/net/req/req_bench.o tests/net/deposit/deposit_bench.o tests/lib/mad/mad_bench.o \
	tests/lib/mpi/mpi_bench.o tests/lib/rpc/rpc_bench.o tests/net/lwip/tcp_echo.o \
	tests/net/rmem/bulk_bench.o

# The objects with test hooks (#ifdef NOW_TEST_HOOKS: forged descriptors,
# raw cells, a pause inside a dequeue): built a second time, with the
# switch, under build/hooks/ for the test image; build/now.elf has none.
HOOK_OBJS := \
	net/req/queue.o \
	net/req/req.o \
	net/req/remote.o \
	net/rmem/rmem.o \
	net/deposit/send.o \
	lib/mad_req.o \
	lib/mad_rmem.o \
	lib/mad_cell.o

# net/: the demultiplexer and the packet pool's shares, then one folder per layer.
NET_OBJS := net/net.o net/pktshare.o

FABRIC_OBJS := $(addprefix net/fabric/,wire.o channel.o fault.o fabric.o start.o member.o discovery.o rx.o inject.o send.o \
	auto.o autoview.o clock.o park.o)

# The services above the link that every mechanism shares.
CALL_OBJS := $(addprefix net/call/,call_wire.o call.o names.o service.o barrier.o)

RMEM_OBJS := $(addprefix net/rmem/,proto.o segtab.o segments.o serve.o rmem.o)

REQ_OBJS := $(addprefix net/req/,queue.o wire.o qtab.o req.o remote.o)

DEPOSIT_OBJS := $(addprefix net/deposit/,cell.o dart.o dart_op.o deposit.o conn.o send.o)

LIB_OBJS := $(addprefix lib/,rpc_server.o rpc_client.o mad.o mad_rpc.o mad_stream.o mad_tcp.o mad_rmem.o \
	mad_req.o mad_cell.o)

# The lwIP port (net/lwip) and the lwIP sources it builds, from
# $(LWIPDIR)/src: IPv4, ARP, TCP, UDP, the netconn and socket APIs.
LWIP_PORT_OBJS := $(addprefix net/lwip/,sys_arch.o netif.o)

LWIP_OBJS := $(addprefix lwip/core/,init.o def.o inet_chksum.o ip.o mem.o memp.o netif.o pbuf.o stats.o sys.o \
	tcp.o tcp_in.o tcp_out.o timeouts.o udp.o) \
	$(addprefix lwip/core/ipv4/,etharp.o icmp.o ip4.o ip4_addr.o ip4_frag.o) \
	$(addprefix lwip/api/,api_lib.o api_msg.o err.o netbuf.o sockets.o tcpip.o) \
	lwip/netif/ethernet.o

# Objects that include lwIP headers: the port's and the apps' using sockets.
LWIP_INC := -I net/lwip -I $(LWIPDIR)/src/include
LWIP_USERS := $(addprefix $(BUILD)/,$(LWIP_PORT_OBJS) lib/mad_tcp.o tests/net/lwip/tcp_echo.o \
	tests/net/lwip/lwip_pin.o tests/bench/ops_tcp.o tests/lib/mad/mad_test.o)

# MPI over Madeleine (lib/mpi/README.md).
MPI_OBJS := $(addprefix lib/mpi/,handle.o init.o pt2pt.o request.o datatype.o op.o coll.o icoll.o comm.o group.o attr.o win.o \
	errors.o info.o topo.o misc.o)

# Every image's system: the kernel, drivers, network layers and libraries.
SYS_OBJS := $(addprefix $(BUILD)/,$(BOOT_OBJS) $(KERNEL_OBJS) $(DRIVER_OBJS) $(NET_OBJS) \
	$(FABRIC_OBJS) $(CALL_OBJS) $(RMEM_OBJS) $(REQ_OBJS) $(DEPOSIT_OBJS) $(LWIP_PORT_OBJS) $(LWIP_OBJS) $(LIB_OBJS) \
	$(MPI_OBJS))
OBJS := $(SYS_OBJS) $(addprefix $(BUILD)/,$(APP_OBJS))

# A program's image (boot/mpicc): the system and the app that runs its main,
# linked once here into one relocatable object (LTO done), so that each
# program links in a fraction of a second.
USER_OBJS := $(SYS_OBJS) $(addprefix $(BUILD)/,apps/app.o apps/program.o)
USER_BUNDLE := $(BUILD)/user/now-user.o
# The test image: the same objects, those with hooks in their build/hooks/
# form, in the same places, then the test and bench apps.
TEST_OBJS := $(foreach o,$(OBJS),$(if $(filter $(o),$(addprefix $(BUILD)/,$(HOOK_OBJS))),$(o:$(BUILD)/%=$(BUILD)/hooks/%),$(o))) \
	$(addprefix $(BUILD)/,$(TEST_APP_OBJS))

all: $(BUILD)/now.elf $(BUILD)/now-test.elf $(USER_BUNDLE)

# --- dependencies ----------------------------------------------------------

# Every build, make run and make test bring what CI brings (.ci/run): as
# root, the Debian packages missing and QEMU 10 from Debian's backports
# (boot/tools/deps.sh --help); otherwise they name what to install.  A QEMU that
# stays older (no root, no backports) is said once, and make test skips and
# names the cases that need QEMU 10.
deps deps-check:
	@boot/tools/deps.sh --qemu10

# apt-get with a private configuration under build/apt: a deb-src entry for
# the suite that carries the pinned versions, without touching the host's
# apt sources and without needing root.
APT_DIR := $(BUILD)/apt
APT_OPTS = -o Dir::Etc::SourceList=$(CURDIR)/$(APT_DIR)/sources.list \
	-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$(CURDIR)/$(APT_DIR)/lists \
	-o Dir::Cache=$(CURDIR)/$(APT_DIR)/cache -o Debug::NoLocking=1 \
	-o APT::Sandbox::User=$(shell id -un)

# Every suite a pinned source comes from (MPICH's is Debian 12's own, the
# version its Linux peers run); the index is read again when the list changes.
APT_SUITES := $(sort $(DEB_SUITE) $(MPICH_SUITE) $(NETPIPE_SUITE))
APT_LIST = $(foreach s,$(APT_SUITES),"deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(DEB_MIRROR) $(s) main")

$(APT_DIR)/sources.list: FORCE
	@mkdir -p $(APT_DIR)
	@printf '%s\n' $(APT_LIST) | cmp -s - $@ || printf '%s\n' $(APT_LIST) > $@

$(APT_DIR)/lists/.updated: $(APT_DIR)/sources.list
	@mkdir -p $(APT_DIR)/lists/partial $(APT_DIR)/cache/archives/partial
	@echo "  FETCH   Debian source index ($(APT_SUITES))"
	@apt-get $(APT_OPTS) -q update > $(APT_DIR)/update.log 2>&1 || \
		{ cat $(APT_DIR)/update.log; echo "error: cannot read the Debian source index ($(DEB_MIRROR)); see above" >&2; exit 1; }
	@touch $@

# fetch <debian-source-spec> <tarball> <sha256>: the pinned Debian revision, or,
# when the index no longer has it (Debian published an update), any revision of
# the same upstream version: its upstream tarball is the same file, and the
# sha256 says so.
define fetch
	@mkdir -p $(DL)
	@if [ ! -f $(DL)/$(2) ]; then \
		echo "  FETCH   $(2)"; \
		cd $(DL) && if ! apt-get $(APT_OPTS) -q source --download-only --tar-only $(1) > fetch.log 2>&1; then \
			pkg=$$(echo '$(1)' | cut -d= -f1); up=$$(echo '$(1)' | cut -d= -f2 | sed 's/-[^-]*$$//'); \
			v=$$(apt-cache $(APT_OPTS) showsrc $$pkg 2>/dev/null | sed -n 's/^Version: //p' | \
				while read x; do [ "$${x%-*}" = "$$up" ] && echo "$$x"; done | head -1); \
			if [ -z "$$v" ]; then cat fetch.log; \
				echo "error: Debian $(DEB_SUITE) has no $$pkg of upstream version $$up (pinned $(1)); its versions:" \
				$$(apt-cache $(APT_OPTS) showsrc $$pkg 2>/dev/null | sed -n 's/^Version: //p') >&2; exit 1; fi; \
			echo "  FETCH   $(2): $(1) is gone from the index; taking $$pkg=$$v (the same upstream)"; \
			apt-get $(APT_OPTS) -q source --download-only --tar-only $$pkg=$$v > fetch.log 2>&1 || \
			{ cat fetch.log; echo "error: apt-get source $$pkg=$$v failed" >&2; exit 1; }; \
		fi; \
	fi
	@echo "$(3)  $(DL)/$(2)" | sha256sum -c --quiet - || \
		{ echo "error: $(DL)/$(2) does not match its sha256; delete it and retry" >&2; exit 1; }
endef

$(DL)/$(PICOLIBC_TAR): | deps-check
	@$(MAKE) -s $(APT_DIR)/lists/.updated
	$(call fetch,$(PICOLIBC_DEB),$(PICOLIBC_TAR),$(PICOLIBC_SHA))
	@touch $@

# After picolibc's, never beside it: the two would share build/apt under -j.
$(DL)/$(LWIP_TAR): | deps-check $(DL)/$(PICOLIBC_TAR)
	@$(MAKE) -s $(APT_DIR)/lists/.updated
	$(call fetch,$(LWIP_DEB),$(LWIP_TAR),$(LWIP_SHA))
	@touch $@

# After lwIP's, for the same reason.
$(DL)/$(MPICH_TAR): | deps-check $(DL)/$(LWIP_TAR)
	@$(MAKE) -s $(APT_DIR)/lists/.updated
	$(call fetch,$(MPICH_DEB),$(MPICH_TAR),$(MPICH_SHA))
	@touch $@

# Only the test suite is unpacked: test/mpi, under build/mpich-<version>/.
MPICH_TESTS := $(BUILD)/mpich-$(MPICH_VER)/test/mpi
$(MPICH_TESTS)/.extracted: $(DL)/$(MPICH_TAR)
	@echo "  UNPACK  MPICH $(MPICH_VER)'s test suite"
	@rm -rf $(BUILD)/mpich-$(MPICH_VER) && mkdir -p $(BUILD)/mpich-$(MPICH_VER)
	@tar -xJf $< -C $(BUILD)/mpich-$(MPICH_VER) --strip-components=1 mpich-$(MPICH_VER)/test/mpi
	@touch $@

mpich-tests: $(MPICH_TESTS)/.extracted

# After MPICH's, for the same reason.
$(DL)/$(NETPIPE_TAR): | deps-check $(DL)/$(MPICH_TAR)
	@$(MAKE) -s $(APT_DIR)/lists/.updated
	$(call fetch,$(NETPIPE_DEB),$(NETPIPE_TAR),$(NETPIPE_SHA))
	@touch $@

# NPmpi, NetPIPE's MPI program, as upstream's makefile builds it (-DMPI
# netpipe.c mpi.c), with boot/mpicc: build/netpipe/NPmpi.elf.
NETPIPE := $(BUILD)/netpipe
$(NETPIPE)/.extracted: $(DL)/$(NETPIPE_TAR)
	@echo "  UNPACK  NetPIPE $(NETPIPE_VER)"
	@rm -rf $(NETPIPE) && mkdir -p $(NETPIPE)/src
	@tar -xzf $< -C $(NETPIPE)/src --strip-components=1
	@touch $@

$(NETPIPE)/NPmpi.elf: $(NETPIPE)/.extracted $(USER_BUNDLE) boot/mpicc
	@echo "  MPICC   NPmpi"
	@boot/mpicc --no-make -O2 -DMPI -I$(NETPIPE)/src/src $(NETPIPE)/src/src/netpipe.c $(NETPIPE)/src/src/mpi.c \
		-o $@ > $(NETPIPE)/build.log 2>&1 || { cat $(NETPIPE)/build.log; exit 1; }

netpipe: $(NETPIPE)/NPmpi.elf

# picolibc for bare-metal x86-64 with the host gcc (about 30 s).  Every
# string operation GCC would inline as a loop of unknown length is a call
# (-mstringop-strategy=libcall): malloc zeroed each block with rep stosb,
# which QEMU's TCG runs as one byte an iteration (a 16 KiB lwIP segment's
# buffer took longer than the segment's every other step; lwIP's bulk TCP
# on the shared-memory link went from about 300 to about 530 MB/s), where
# memset stores eight bytes a move.  Rebuilt when these flags change.
PICOLIBC_CARGS := '-mno-red-zone','-mstringop-strategy=libcall'
$(BUILD)/picolibc.flags: FORCE
	@mkdir -p $(dir $@)
	@echo "$(PICOLIBC_CARGS)" | cmp -s - $@ || echo "$(PICOLIBC_CARGS)" > $@

$(LIBC): $(DL)/$(PICOLIBC_TAR) $(BUILD)/picolibc.flags
	@echo "  BUILD   picolibc $(PICOLIBC_VER)"
	@rm -rf $(BUILD)/picolibc-src $(BUILD)/picolibc-build $(PICOLIBC)
	@mkdir -p $(BUILD)/picolibc-src
	@tar -xzf $< -C $(BUILD)/picolibc-src --strip-components=1
	@cd $(BUILD)/picolibc-src && meson setup ../picolibc-build \
		--cross-file scripts/cross-x86_64-linux-gnu.txt \
		-Dmultilib=false -Dtests=false -Dpicocrt=false -Dsemihost=false \
		-Dspecsdir=none "-Dc_args=[$(PICOLIBC_CARGS)]" \
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

# The framebuffer console's glyphs: GRUB's 8x16 ASCII font (Debian's grub-common).
GRUB_FONT := /usr/share/grub/ascii.h
$(BUILD)/gen/font8x16.h: $(GRUB_FONT)
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	@{ echo "/* Generated from $(GRUB_FONT) (grub-common) by the Makefile. */"; \
	   sed 's/^unsigned char ascii_bitmaps/static const unsigned char ascii_bitmaps/' $<; } > $@
# On a fresh machine the font comes with grub-common, which deps-check installs.
$(GRUB_FONT): | deps-check
	@test -f $@ || { echo "error: $@ is missing: install Debian's grub-common" >&2; exit 1; }
$(BUILD)/drivers/fbcon.o: KCFLAGS += -I$(BUILD)/gen
$(BUILD)/drivers/fbcon.o: $(BUILD)/gen/font8x16.h

# The kernel's flags as last built: objects are rebuilt when they change
# (make TRACE=0, LTO=0 and back).
$(BUILD)/kflags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(KCFLAGS) $(KLD)' | cmp -s - $@ || echo '$(KCFLAGS) $(KLD)' > $@

FORCE:

# The layers (DESIGN, "Layers"): each file is compiled through its layer's
# view of the tree, $(BUILD)/layers/<layer, "." for "/">/ (linker/layers.py: links to the
# files of its own folders and of the layers it may use), with that view as
# its only include path.  A header it may not use is a file the compiler
# cannot find, however it is named (quoted, <...>, "../", from a .inc).
# Names in the debug information and __FILE__ stay the tree's.
LAYERS := $(BUILD)/layers/.made
$(LAYERS): FORCE
	@python3 linker/layers.py views $(BUILD) && touch $@
# A view's file that an object's dependencies name and that is gone (a view
# renamed, a file moved): nothing to make, and the object is made again.
$(BUILD)/layers/%: ;
layer_of = $(firstword $(foreach d,net/fabric net/call net/lwip net/rmem net/req net/deposit lib apps boot kernel drivers \
	net,$(if $(filter $(d)/%,$(1)),$(d))) $(if $(filter tests/%,$(1)),tests))
VIEW = $(BUILD)/layers/$(subst /,.,$(call layer_of,$<))
VIEWFLAGS = -I$(VIEW) -ffile-prefix-map=$(VIEW)/=

$(BUILD)/%.o: %.c $(BUILD)/kflags | $(LIBC) $(LAYERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KCFLAGS) $(VIEWFLAGS) -c -o $@ $(VIEW)/$< || { python3 linker/layers.py why $(BUILD) $<; exit 1; }

# kernel/posix.c: picolibc's headers declare the clocks it provides (and Linux's ids) only so.
$(BUILD)/kernel/posix.o $(BUILD)/kernel/files.o: KCFLAGS := -D_GNU_SOURCE -include kernel/posix.h $(KCFLAGS)

# The test and bench apps see the hooks' declarations.
$(addprefix $(BUILD)/,$(TEST_APP_OBJS)): KCFLAGS += -DNOW_TEST_HOOKS

$(BUILD)/hooks/%.o: %.c $(BUILD)/kflags | $(LIBC) $(LAYERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (test hooks)"
	@$(CC) $(KCFLAGS) $(VIEWFLAGS) -DNOW_TEST_HOOKS -c -o $@ $(VIEW)/$< || { python3 linker/layers.py why $(BUILD) $<; exit 1; }

$(LWIP_USERS): KCFLAGS += $(LWIP_INC)
$(LWIP_USERS): | $(LWIPDIR)/.extracted

# lwIP itself: the kernel flags, the port's headers first.  A static
# pattern, so that make never thinks it can build other names this way.
$(addprefix $(BUILD)/,$(LWIP_OBJS)): $(BUILD)/lwip/%.o: $(LWIPDIR)/.extracted $(BUILD)/kflags | $(LIBC) $(LAYERS)
	@mkdir -p $(dir $@)
	@echo "  CC      lwip/$*.c"
	@$(CC) $(KCFLAGS) $(LWIP_INC) -I$(BUILD)/layers/net.lwip -ffile-prefix-map=$(BUILD)/layers/net.lwip/= \
		-c -o $@ $(LWIPDIR)/src/$*.c

$(BUILD)/%.o: %.S | $(LAYERS)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC) $(KASFLAGS) $(VIEWFLAGS) -c -o $@ $(VIEW)/$< || { python3 linker/layers.py why $(BUILD) $<; exit 1; }

$(BUILD)/ksyms-empty.o:
	@mkdir -p $(dir $@)
	@printf '\t.section .ksyms, "a"\n' | $(CC) -c -x assembler -o $@ -

# Two links: the second carries the symbol table of the first (for
# backtraces).  .ksyms sits after all code and data, so no address moves;
# the check below makes sure of it.  $(call link,objects)
# The linker's half of the layers: no object uses a symbol that an object
# of a layer it may not use defines (an extern declaration and a call, with
# no #include at all); linker/layers.py names each such use.
define link
	@python3 linker/layers.py check --obj-root $(BUILD)/hooks --obj-root $(BUILD) $(1) || \
		{ echo "error: $@ not linked: an object uses a layer it may not (above)" >&2; exit 1; }
	@echo "  LD      $@"
	@$(KLD) -o $@.pass1 $(1) $(BUILD)/ksyms-empty.o $(LIBC) $(LIBGCC)
	@linker/mksyms.sh $@.pass1 > $@.ksyms.S
	@$(CC) -c -o $@.ksyms.o $@.ksyms.S
	@$(KLD) -o $@ $(1) $@.ksyms.o $(LIBC) $(LIBGCC)
	@nm -n $@.pass1 | grep -i ' t ' > $@.syms1
	@nm -n $@ | grep -i ' t ' > $@.syms2
	@cmp -s $@.syms1 $@.syms2 || \
		{ echo "error: code moved between the two links" >&2; rm -f $@; exit 1; }
	@rm -f $@.pass1 $@.syms1 $@.syms2 $@.ksyms.S $@.ksyms.o
	@size $@ | tail -1 | awk '{ printf "  SIZE    %s: text %d data %d bss %d\n", "$(@F)", $$1, $$2, $$3 }'
endef

$(BUILD)/now.elf: $(OBJS) $(BUILD)/ksyms-empty.o linker/kernel.ld linker/mksyms.sh $(LIBC) $(BUILD)/kflags
	$(call link,$(OBJS))

# -r with -flinker-output=nolto-rel: the link-time optimisation runs now, and
# what comes out is plain code that a program's objects link against.
$(USER_BUNDLE): $(USER_OBJS) $(BUILD)/ksyms-empty.o $(LIBC) $(BUILD)/kflags
	@mkdir -p $(dir $@)
	@echo "  LD -r   $@"
	@$(filter-out -T linker/kernel.ld,$(KLD)) -r $(if $(filter 1,$(LTO)),-flinker-output=nolto-rel) -o $@.tmp \
		$(USER_OBJS)
	@cp $(BUILD)/ksyms-empty.o $(BUILD)/user/ksyms-empty.o
	@mv $@.tmp $@

user: $(USER_BUNDLE)

# The test image: build/now.elf's kernel with its test hooks, and the test
# and bench apps.  make test, bench, trace and cost boot it; so do make run
# and boot/cluster for an app that only it has.
$(BUILD)/now-test.elf: $(TEST_OBJS) $(BUILD)/ksyms-empty.o linker/kernel.ld linker/mksyms.sh $(LIBC) $(BUILD)/kflags
	$(call link,$(TEST_OBJS))

-include $(OBJS:.o=.d) $(addprefix $(BUILD)/hooks/,$(HOOK_OBJS:.o=.d)) $(addprefix $(BUILD)/,$(TEST_APP_OBJS:.o=.d)) \
	$(BUILD)/apps/program.d

# --- running ---------------------------------------------------------------

# Two makes in one tree at once (two make run right after an edit) would compile the
# same objects and link the same image together, and one link would find the other's
# code moved under it.  The targets that boot an image build the images under a lock
# of the tree ($(BUILD)/.build.lock): a second one waits, and says so.
IMAGES := $(BUILD)/now.elf $(BUILD)/now-test.elf
images: $(IMAGES)
locked-images:
	@mkdir -p $(BUILD); exec 9>$(BUILD)/.build.lock; \
	flock -n 9 || { echo "make: another make is building in this tree; waiting for it to finish"; flock 9; }; \
	$(MAKE) --no-print-directory images $(IMAGES_TOO)

APP     ?= tour
NODES   ?= 4
NIC     ?= virtio
ARGS    ?=
CLUSTER ?=

# make run ends on one sentence: the cluster's status and the first cause seen
# (boot/cluster --tell; GNU make itself then exits 2 on any failure, with "Error N").
run bench trace cost: export NOW_KEY = $(KEY)
run: locked-images
	@boot/cluster --tell "make run" --nodes $(NODES) --nic $(NIC) $(if $(APP),--app $(APP)) \
		$(if $(ARGS),--args "$(ARGS)") $(if $(KEY),--key "$$NOW_KEY") $(CLUSTER)

# Speedup table of a parallel app over 1, 2, 4 and 8 nodes (boot/tools/speedup --help).
speedup: locked-images
	@if [ "$(APP)" = tour ] || [ -z "$(APP)" ]; then \
		echo "make speedup: say which app, e.g. make speedup APP=ising (or APP=circuit)"; exit 2; fi
	@boot/tools/speedup --app $(APP) --nic $(NIC) $(if $(ARGS),--args "$(ARGS)") $(if $(VARY),--vary $(VARY))

qemu-gdb: locked-images
	@boot/cluster --nodes 1 --gdb $(if $(APP),--app $(APP)) $(if $(ARGS),--args "$(ARGS)")

# The benchmark suite: one cluster run per NIC, every row beside the floor.  The
# Ethernet NICs' switch (BENCH_SWITCH=tap|jumbo|vde): auto is tap, a Linux bridge,
# where the bench can make it (root), else the launcher's jumbo switch.
BENCH_ITERS ?= 5000
BENCH_NICS  ?= virtio,e1000,e1000e,igb,shm,shm-halt
BENCH_ROUNDS ?= 5
BENCH_SWITCH ?= auto

bench: IMAGES_TOO = $(NETPIPE)/NPmpi.elf
bench: locked-images
	@boot/tools/bench --iters $(BENCH_ITERS) --bulk-rounds $(BENCH_ROUNDS) --nics $(BENCH_NICS) --switch $(BENCH_SWITCH) \
		$(if $(filter 1,$(PEERS)),--peers) \
		$(if $(KEY),--key "$$NOW_KEY")

# make trace: one operation at a time, stamped at every stage on both nodes
# (app stages), the two clocks aligned by the fabric: a table of each step's
# median and 99th percentile per NIC, and build/trace/trace.json.
#   make trace APP=write,read,cas,req,deposit NIC=shm,e1000 ITERS=200
# (APP and NIC as given on the command line; make run's defaults do not apply.)
TRACE_OPS = $(if $(filter command line environment,$(origin APP)),$(APP),write,read,cas,req,deposit)
TRACE_NICS = $(if $(filter command line environment,$(origin NIC)),$(NIC),shm,e1000)
ITERS ?= 200
trace: locked-images
	@boot/tools/bench --trace-only --stages $(TRACE_NICS) --ops $(TRACE_OPS) --stage-iters $(ITERS) \
		$(if $(KEY),--key "$$NOW_KEY") --out $(BUILD)/trace/trace.json

# make cost: every operation's instructions per stage on each node, under QEMU's
# -icount (boot/tools/cost --help): shm, e1000 and virtio, without and with a key, a table
# and build/cost/cost.json, each operation beside its budget (tests/cost/budgets).
cost: locked-images
	@boot/tools/cost --check $(if $(COST_LINKS),--links $(COST_LINKS)) $(if $(filter 1,$(STEPS)),--steps) \
		$(if $(KEY),--key "$$NOW_KEY")

# make mpi-test: MPICH's own test suite (test/mpi of Debian 12's mpich source) judges lib/mpi:
# every program built with boot/mpicc and run with boot/mpirun (tests/lib/mpi/README.md).
#   make mpi-test                                   pt2pt coll comm group init datatype basic, on shm
#   make mpi-test MPI_TESTS=coll,pt2pt/anyall NIC=e1000 FAULT=drop:0.02,dup:0.02 DRIVER=req
# (NIC only as given on the command line: make run's default does not apply; the runner's is shm.)
MPI_TEST_JOBS ?= 2
mpi-test: $(BUILD)/user/now-user.o $(MPICH_TESTS)/.extracted
	@MPI_TESTS='$(MPI_TESTS)' $(PYTHON) tests/lib/mpi/runtests.py --suite $(MPICH_TESTS) --out $(BUILD)/mpi-test \
		--jobs $(MPI_TEST_JOBS) $(if $(filter command line environment,$(origin NIC)),--nic $(NIC)) \
		$(if $(FAULT),--fault $(FAULT)) $(if $(DRIVER),--driver $(DRIVER))

# make mpi-rma: the rma tests tests/lib/mpi/rma.txt names (the one-sided windows' set), on shm (as make
# test does), then on virtio and e1000 with the fabric dropping and duplicating 2 % of frames.
MPI_RMA_FAULT ?= drop:0.02,dup:0.02
mpi-rma: $(BUILD)/user/now-user.o $(MPICH_TESTS)/.extracted
	@set -e; for run in shm: virtio:$(MPI_RMA_FAULT) e1000:$(MPI_RMA_FAULT); do \
		nic=$${run%%:*}; fault=$${run#*:}; \
		echo "mpi-rma: on $$nic$${fault:+ with fault=$$fault}"; \
		$(PYTHON) tests/lib/mpi/runtests.py --suite $(MPICH_TESTS) --tests tests/lib/mpi/rma.txt,tests/lib/mpi/rma-more.txt --dirs rma \
			--nic $$nic $${fault:+--fault $$fault} --cap-np 4 --mem 256 --jobs $(MPI_TEST_JOBS) \
			--out $(BUILD)/mpi-rma-$$nic; \
	done

# make papers: the four papers' own figures beside ours (e1000 and shm), with ratios.
PAPERS_ITERS ?= 2000
papers: locked-images
	@boot/tools/papers --iters $(PAPERS_ITERS)

# --- ISO for GRUB ----------------------------------------------------------

# The menu's default entry: every PC the same line, the ids agreed on the segment.
CMDLINE ?= node=auto nodes=auto app=hello

KEY ?=

# The ISO make test boots to check that the menu's key reaches the kernel.
$(BUILD)/now-keyed.iso: KEY = iso-test-key-0123456789
$(BUILD)/now-keyed.iso: CMDLINE = node=0 nodes=1 app=hello

# CMDLINE and KEY reach the recipes below through the environment, never
# through a shell's reading of them (a quote in either would end the recipe
# with a shell's error instead of boot/tools/checkline's).
# The menu's values as last written (CMDLINE, and a digest of KEY, never the key):
# an ISO or a netboot directory is made again whenever they change.
%.menu: export NOW_LINE = $(CMDLINE)
%.menu: export NOW_KEY = $(KEY)
%.menu: FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n%s\n' "$$NOW_LINE" "$$(printf '%s' "$$NOW_KEY" | sha256sum)" | cmp -s - $@ || \
		printf '%s\n%s\n' "$$NOW_LINE" "$$(printf '%s' "$$NOW_KEY" | sha256sum)" > $@

.PRECIOUS: %.menu

# What the menu's default entry boots, as it will be shown (the key hidden).
MENU_SHOWN = $(CMDLINE)$(if $(KEY), key=(hidden))

# Before anything is written, the image says whether a PC would take the line
# (boot/tools/checkline: the error the PC would print, and make stops).
$(BUILD)/%.iso: export NOW_LINE = $(CMDLINE)
$(BUILD)/%.iso: export NOW_KEY = $(KEY)
$(BUILD)/%.iso: $(BUILD)/now.elf boot/grub.cfg.in $(BUILD)/%.iso.menu
	@boot/tools/checkline --kernel $(BUILD)/now.elf --for "make iso"
	@echo "  ISO     $@: menu '$(MENU_SHOWN)'"
	@rm -rf $@.d && mkdir -p $@.d/boot/grub
	@cp $(BUILD)/now.elf $@.d/boot/now.elf
	@sed -e 's|@CMDLINE@|$(CMDLINE)|g' -e 's|@KEY@|$(KEY)|g' boot/grub.cfg.in > $@.d/boot/grub/grub.cfg
	@grub-mkrescue -o $@ $@.d > $@.log 2>&1 || { cat $@.log; exit 1; }

iso: $(BUILD)/now.iso

# make key: a fresh random cluster key (24 random bytes, 32 characters of base64
# with - and _ for + and /, safe in GRUB's menu and on a shell's line) on stdout,
# what to do with it on stderr: KEY=$$(make -s key) keeps only the key.
key:
	@k=$$(head -c 24 /dev/urandom | base64 | tr '+/' '-_') && echo "$$k" && \
	echo "make key: a fresh cluster key (32 characters), above; give every node the same one:" \
		"make iso KEY=<it>, make netboot KEY=<it>, make run KEY=<it>; keep it secret" >&2

# --- network boot ------------------------------------------------------------
#
# make netboot writes build/netboot/, the root of a TFTP server: GRUB's
# network images for BIOS PCs (boot/grub/i386-pc/core.0, PXE) and UEFI PCs
# (boot/grub/x86_64-efi/core.efi), the menu (CMDLINE=, KEY= as for the ISO)
# and the kernel.  The DHCP server names the image as the boot file.
NETBOOT_DIR ?= $(BUILD)/netboot

# The directory make test boots two nodes from: two nodes agree on ids and run fabric-stress.
# (the test image, whose fabric-stress counts every message).
$(BUILD)/netboot-test: CMDLINE = node=auto nodes=2 app=fabric-stress count=300
$(BUILD)/netboot-test: KEY =
$(BUILD)/netboot-test: NETBOOT_ELF = $(BUILD)/now-test.elf
NETBOOT_ELF = $(BUILD)/now.elf

$(NETBOOT_DIR): $(NETBOOT_DIR).menu
$(BUILD)/netboot-test: $(BUILD)/netboot-test.menu
$(NETBOOT_DIR) $(BUILD)/netboot-test: export NOW_LINE = $(CMDLINE)
$(NETBOOT_DIR) $(BUILD)/netboot-test: export NOW_KEY = $(KEY)
$(NETBOOT_DIR) $(BUILD)/netboot-test: $$(NETBOOT_ELF) boot/grub.cfg.in
	@boot/tools/checkline --kernel $(NETBOOT_ELF) --for "make netboot"
	@echo "  NETBOOT $@: menu '$(MENU_SHOWN)'"
	@rm -rf $@ && mkdir -p $@/boot/grub
	@for p in i386-pc x86_64-efi; do \
		grub-mknetdir --net-directory=$@ --subdir=boot/grub -d /usr/lib/grub/$$p \
			--fonts= --locales= --themes= > $@.log 2>&1 || { cat $@.log; exit 1; }; \
	done
	@cp $(NETBOOT_ELF) $@/boot/now.elf
	@sed -e 's|@CMDLINE@|$(CMDLINE)|g' -e 's|@KEY@|$(KEY)|g' boot/grub.cfg.in > $@/boot/grub/grub.cfg
	@echo "netboot: $@ (TFTP root): BIOS boot file boot/grub/i386-pc/core.0, UEFI boot/grub/x86_64-efi/core.efi"

netboot: $(NETBOOT_DIR)

# --- tests -----------------------------------------------------------------

# The tests' C sources are filed by the feature they test (tests/README.md);
# make finds each by its name wherever it is under tests/: test_<name>.c is
# the unit test build/tests/unit_<name>, fuzz_<name>.c and seed_<name>.c the
# fuzz target build/fuzz/fuzz_<name> and its seed generator.  A name given
# twice is refused.
TEST_SRCS := $(sort $(wildcard tests/*.c tests/*/*.c tests/*/*/*.c tests/*/*/*/*.c))
$(foreach n,$(filter test_%.c fuzz_%.c seed_%.c,$(sort $(notdir $(TEST_SRCS)))),$(if \
	$(word 2,$(filter %/$(n),$(TEST_SRCS))),$(error two tests' sources named $(n): $(filter %/$(n),$(TEST_SRCS)))))
# $(call test_src,NAME): the path of tests/.../NAME (a path that does not
# exist when there is none, so that a pattern rule does not apply).
test_src = $(firstword $(filter %/$(1),$(TEST_SRCS)) tests/$(1))

UNIT_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -DHOST_TEST -I. \
	-fsanitize=address,undefined -fno-omit-frame-pointer
UNIT_LIBS := -lcmocka

# Each host unit test: its test file and the pure kernel sources it drives.
UNIT_SRCS_cmdline := kernel/cmdline.c
UNIT_SRCS_page    := kernel/page.c
UNIT_SRCS_scrypt  := kernel/scrypt.c
UNIT_SRCS_channel := net/fabric/channel.c net/fabric/wire.c kernel/crc.c kernel/siphash.c kernel/scrypt.c tests/host/host_pktbuf.c
UNIT_SRCS_wire    := net/fabric/wire.c net/fabric/fault.c kernel/crc.c kernel/siphash.c kernel/scrypt.c
UNIT_SRCS_rmem    = $(RMEM_HOST_SRCS)
# The kernel's remote memory and request/answer code on the fake fabric boundary.
RMEM_HOST_SRCS    := net/rmem/serve.c net/rmem/rmem.c net/rmem/segments.c net/rmem/segtab.c \
	net/rmem/proto.c net/call/call.c net/call/names.c net/call/service.c net/call/call_wire.c \
	tests/host/host_fabric.c tests/host/host_rmem.c tests/host/host_pktbuf.c kernel/counters.c
UNIT_SRCS_rmem_serve := $(RMEM_HOST_SRCS)
UNIT_SRCS_rpc_claim := $(RMEM_HOST_SRCS) lib/rpc_client.c kernel/crc.c
UNIT_SRCS_rpc_server := $(RMEM_HOST_SRCS) lib/rpc_server.c kernel/crc.c
UNIT_SRCS_req_queue := net/req/queue.c
UNIT_SRCS_req_rx  := net/req/qtab.c net/req/queue.c net/req/wire.c
UNIT_SRCS_req_remote := net/req/req.c net/req/remote.c net/req/qtab.c net/req/queue.c net/req/wire.c \
	$(RMEM_HOST_SRCS)
UNIT_SRCS_cell    := net/deposit/cell.c kernel/crc.c
UNIT_SRCS_dart    := net/deposit/dart.c net/deposit/dart_op.c net/deposit/cell.c kernel/crc.c
UNIT_SRCS_mad     := lib/mad.c lib/mad_rpc.c
# malloc through the test's wrapper, which can be told to fail.
UNIT_LDFLAGS_mad  := -Wl,--wrap=malloc
UNIT_SRCS_call    := net/call/call_wire.c
UNIT_SRCS_member  := net/fabric/member.c net/fabric/wire.c kernel/crc.c kernel/siphash.c kernel/scrypt.c kernel/incarnation.c net/call/call.c \
	net/call/names.c net/call/service.c net/call/call_wire.c tests/host/host_fabric.c tests/host/host_pktbuf.c
UNIT_SRCS_pktbuf  := drivers/pktbuf.c tests/host/host_kernel.c
UNIT_SRCS_pktbuf_longest := drivers/pktbuf.c tests/host/host_kernel.c
UNIT_SRCS_pktshare := net/pktshare.c drivers/pktbuf.c tests/host/host_kernel.c
UNIT_SRCS_autoview := net/fabric/autoview.c net/fabric/wire.c kernel/crc.c kernel/siphash.c kernel/scrypt.c
UNIT_SRCS_shm_ring :=
UNIT_SRCS_acpi_s5 := kernel/acpi_s5.c
UNIT_SRCS_calib   := kernel/calib.c
UNIT_SRCS_counters := kernel/counters.c
# The fabric's kernel side, node 1 of four, with simulated peers.
FABRIC_NODE_SRCS  := net/fabric/fabric.c net/fabric/start.c net/fabric/rx.c net/fabric/discovery.c net/fabric/send.c net/fabric/auto.c \
	net/fabric/autoview.c net/fabric/park.c \
	net/call/barrier.c net/fabric/member.c net/fabric/channel.c net/fabric/wire.c \
	net/fabric/inject.c net/fabric/fault.c kernel/crc.c kernel/siphash.c kernel/scrypt.c kernel/cmdline.c \
	tests/net/fabric/host_node.c tests/host/host_pktbuf.c net/pktshare.c kernel/counters.c
UNIT_SRCS_fabric_rx := $(FABRIC_NODE_SRCS)
# test_mad_tcp includes lib/mad_tcp.c itself, with lwIP's socket headers (none of lwIP's code).
UNIT_SRCS_mad_tcp := lib/mad.c kernel/siphash.c
$(BUILD)/tests/unit_mad_tcp: UNIT_CFLAGS += -include tests/host/lwip_host.h $(LWIP_INC)
$(BUILD)/tests/unit_mad_tcp: lib/mad_tcp.c lib/mad_drv.h tests/host/lwip_host.h tests/lib/mad/mad_tcp_host.h $(LWIPDIR)/.extracted
UNIT_SRCS_barrier := net/call/barrier.c tests/host/host_fabric.c tests/host/host_pktbuf.c
UNIT_SRCS_circuit := apps/circuit_net.c apps/circuit_sim.c apps/circuit_ring.c apps/circuit_cmb.c
UNIT_SRCS_ising   := apps/ising_core.c

# MPI's pure parts, on a fake of the rest (tests/lib/mpi/host_mpi.c: ranks as host threads).
UNIT_SRCS_mpi_datatype := lib/mpi/datatype.c lib/mpi/handle.c
UNIT_SRCS_mpi_op   := lib/mpi/op.c lib/mpi/handle.c tests/lib/mpi/host_mpi.c
UNIT_SRCS_mpi_coll := lib/mpi/coll.c lib/mpi/icoll.c lib/mpi/op.c lib/mpi/handle.c tests/lib/mpi/host_mpi.c
# Communicators, groups, errors, attributes, info, topologies; test_mpi_comm forks worlds of processes.
MPI_COMM_HOST_SRCS := lib/mpi/errors.c lib/mpi/group.c lib/mpi/comm.c lib/mpi/attr.c lib/mpi/info.c \
	lib/mpi/topo.c lib/mpi/misc.c lib/mpi/handle.c tests/lib/mpi/host_mpi_comm.c
UNIT_SRCS_mpi_group  := $(MPI_COMM_HOST_SRCS)
UNIT_SRCS_mpi_errors := $(MPI_COMM_HOST_SRCS)
UNIT_SRCS_mpi_attr   := $(MPI_COMM_HOST_SRCS)
UNIT_SRCS_mpi_info   := $(MPI_COMM_HOST_SRCS)
UNIT_SRCS_mpi_topo   := $(MPI_COMM_HOST_SRCS)
UNIT_SRCS_mpi_comm   := $(MPI_COMM_HOST_SRCS)

# Every test_<name>.c under tests/.
UNIT_TESTS := $(patsubst test_%.c,%,$(filter test_%.c,$(notdir $(TEST_SRCS))))
UNIT_BINS := $(addprefix $(BUILD)/tests/unit_,$(UNIT_TESTS))

# Each test is compiled and linked from several sources in one command, so its
# header dependencies come from one -MM pass over all of them (-MMD would
# leave only the last source's), and a header change rebuilds what uses it.
# Its sources get an empty rule each, as -MP gives the headers: a source
# moved or gone makes the test again instead of stopping make.
$(BUILD)/tests/unit_%: $$(call test_src,test_$$*.c) $$(UNIT_SRCS_$$*) | deps-check
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) $(UNIT_CFLAGS) -MM -MP -MT $@ $< $(UNIT_SRCS_$*) > $@.d
	@printf '%s:\n' $< $(UNIT_SRCS_$*) >> $@.d
	@$(HOSTCC) $(UNIT_CFLAGS) -o $@ $< $(UNIT_SRCS_$*) $(UNIT_LDFLAGS_$*) $(UNIT_LIBS)

-include $(UNIT_BINS:=.d)

# A source under tests/unit/ or tests/fuzz/ that the dependency file of a
# build made before the tests were filed by feature names: nothing to make,
# and the test is made again from where its source is now.
tests/unit/%.c tests/fuzz/%.c: ;

unit: $(UNIT_BINS)

# A co-resident writer of the shared-memory link at the host's speed (boot/cluster --shm-race stamps).
$(BUILD)/tests/ivshmem-racer: tests/drivers/ivshmem_racer.c drivers/shm_ring.h
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@$(HOSTCC) -std=gnu11 -O2 -Wall -Wextra -I. -o $@ tests/drivers/ivshmem_racer.c

test: $(BUILD)/now.elf $(BUILD)/now-test.elf $(USER_BUNDLE) $(MPICH_TESTS)/.extracted $(NETPIPE)/NPmpi.elf $(BUILD)/now.iso $(BUILD)/now-keyed.iso $(BUILD)/netboot-test $(UNIT_BINS) $(BUILD)/tests/ivshmem-racer $$(FUZZ_BINS)
	@$(PYTHON) tests/run.py --build $(BUILD) $(UNIT_BINS)

# --- housekeeping ----------------------------------------------------------

clean:
	rm -rf $(BUILD)/boot $(BUILD)/kernel $(BUILD)/drivers $(BUILD)/net $(BUILD)/lib \
		$(BUILD)/lwip $(BUILD)/apps $(BUILD)/tests $(BUILD)/iso $(BUILD)/*.o $(BUILD)/*.S \
		$(BUILD)/now.elf* $(BUILD)/now-test.elf* $(BUILD)/now.iso* $(BUILD)/now-keyed.iso* \
		$(BUILD)/netboot* $(BUILD)/kflags $(BUILD)/hooks

# make bench's results outlive make clean: a separate target removes them.
clean-bench:
	rm -rf $(BUILD)/bench

help:
	@sed -n '1,/^$$/s/^#   make/make/p' Makefile
	@echo "variables: APP= NODES= NIC= ARGS= CLUSTER= (run); CMDLINE= (iso, netboot);"
	@echo "  KEY= (run, iso, netboot; bench, trace and cost: their keyed runs); ITERS= (trace);"
	@echo "  BENCH_ITERS= BENCH_ROUNDS= BENCH_NICS= BENCH_SWITCH= PEERS=1 (bench); TRACE=0 LTO=0 (the kernel's build)"

distclean:
	rm -rf $(BUILD)

.PHONY: FORCE images locked-images all deps deps-check picolibc lwip run key qemu-gdb bench cost trace papers mpi-rma speedup iso netboot unit test clean \
	mpi-test mpich-tests netpipe user \
	clean-bench distclean help

# --- fuzzing ---------------------------------------------------------------
#
#   make fuzz                 run every fuzz target for FUZZ_SECONDS (600)
#   make fuzz FUZZ_SECONDS=60

FUZZ_SECONDS ?= 600
FUZZ_CC := clang
FUZZ_CFLAGS := -std=gnu11 -g -O1 -DHOST_TEST -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -I. \
	-fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_SRCS_fabric := net/fabric/channel.c net/fabric/member.c net/fabric/wire.c kernel/crc.c kernel/siphash.c kernel/scrypt.c tests/host/host_pktbuf.c
FUZZ_SRCS_fabric_rx := $(FABRIC_NODE_SRCS)
# fuzz_madtcp includes lib/mad_tcp.c itself, with lwIP's socket headers (none of lwIP's code).
FUZZ_SRCS_madtcp := lib/mad.c kernel/siphash.c
$(BUILD)/fuzz/fuzz_madtcp: FUZZ_CFLAGS += -include tests/host/lwip_host.h $(LWIP_INC)
$(BUILD)/fuzz/fuzz_madtcp: lib/mad_tcp.c lib/mad_drv.h tests/host/lwip_host.h tests/lib/mad/mad_tcp_host.h $(LWIPDIR)/.extracted
# lwIP's own sources, built for the host (the same ones the kernel builds), without the
# API layer: the target runs lwIP single-threaded; tests/host/lwip_host.h first in each.
FUZZ_SRCS_lwip := tests/host/host_pktbuf.c net/pktshare.c $(LWIPDIR)/src/api/err.c \
	$(patsubst lwip/%.o,$(LWIPDIR)/src/%.c,$(filter-out lwip/api/%,$(LWIP_OBJS)))
$(BUILD)/fuzz/fuzz_lwip: FUZZ_CFLAGS += -include tests/host/lwip_host.h $(LWIP_INC)
# lwIP's tcp_update_rcv_ann_wnd compares the scaled TCP_WND/2 with a u16_t MSS: clang says so.
$(BUILD)/fuzz/fuzz_lwip: FUZZ_CFLAGS += -Wno-tautological-constant-out-of-range-compare
$(BUILD)/fuzz/fuzz_lwip: net/lwip/netif.c net/lwip/lwipopts.h tests/host/lwip_host.h
$(patsubst lwip/%.o,$(LWIPDIR)/src/%.c,$(LWIP_OBJS)) $(LWIPDIR)/src/api/err.c: $(LWIPDIR)/.extracted
FUZZ_SRCS_rmem := $(RMEM_HOST_SRCS)
FUZZ_SRCS_req := net/req/qtab.c net/req/queue.c net/req/wire.c
FUZZ_SRCS_call := net/call/call_wire.c
FUZZ_SRCS_cell := net/deposit/cell.c net/deposit/dart.c net/deposit/dart_op.c kernel/crc.c
SEED_SRCS_cell := net/deposit/cell.c net/deposit/dart.c net/deposit/dart_op.c
FUZZ_SRCS_cmdline := kernel/cmdline.c kernel/config.c net/fabric/fault.c
FUZZ_SRCS_mad := lib/mad.c lib/mad_rpc.c
FUZZ_SRCS_rpc := $(RMEM_HOST_SRCS) lib/rpc_server.c kernel/crc.c
FUZZ_SRCS_net := net/net.c drivers/netdev.c tests/host/host_pktbuf.c
# fuzz_e1000 includes drivers/e1000.c itself (its receive ring is static).
FUZZ_SRCS_e1000 := drivers/intel_nic.c drivers/netdev.c tests/host/host_pktbuf.c
$(BUILD)/fuzz/fuzz_e1000: drivers/e1000.c drivers/e1000_regs.h drivers/intel_nic.h tests/drivers/intel_stubs.h
# fuzz_igb includes drivers/igb.c itself (its receive ring is static).
FUZZ_SRCS_igb := drivers/intel_nic.c drivers/netdev.c tests/host/host_pktbuf.c
$(BUILD)/fuzz/fuzz_igb: drivers/igb.c drivers/igb_regs.h drivers/intel_nic.h tests/drivers/intel_stubs.h
# fuzz_madcell includes lib/mad_cell.c itself (its stream reader is static).
FUZZ_SRCS_madcell := lib/mad.c lib/mad_stream.c
$(BUILD)/fuzz/fuzz_madcell: lib/mad_cell.c lib/mad_drv.h
# fuzz_virtio_net includes drivers/virtio_net.c itself (its receive queue is static).
FUZZ_SRCS_virtio_net := drivers/virtio.c drivers/netdev.c tests/host/host_pktbuf.c
$(BUILD)/fuzz/fuzz_virtio_net: drivers/virtio_net.c drivers/virtio.h
# fuzz_madreq includes lib/mad_req.c itself (its stream reader is static).
FUZZ_SRCS_madreq := lib/mad.c lib/mad_stream.c
$(BUILD)/fuzz/fuzz_madreq: lib/mad_req.c lib/mad_drv.h
# Where a module prints its counters: the one routine that prints them (kernel/counters.c).
FUZZ_SRCS_net += kernel/counters.c
FUZZ_SRCS_e1000 += kernel/counters.c
FUZZ_SRCS_igb += kernel/counters.c
FUZZ_SRCS_virtio_net += kernel/counters.c
FUZZ_SRCS_lwip += kernel/counters.c
# Every fuzz_<name>.c under tests/ (each with its seed_<name>.c).
FUZZ_TARGETS := $(patsubst fuzz_%.c,%,$(filter fuzz_%.c,$(notdir $(TEST_SRCS))))
FUZZ_BINS := $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_TARGETS))

$(BUILD)/fuzz/fuzz_%: $$(call test_src,fuzz_$$*.c) $$(call test_src,seed_$$*.c) $$(FUZZ_SRCS_$$*) | deps-check
	@mkdir -p $(dir $@) $(BUILD)/fuzz/corpus_$* $(BUILD)/fuzz/seeds_$*
	@echo "  FUZZCC  $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -MM -MP -MT $@ $< $(FUZZ_SRCS_$*) > $@.d
	@printf '%s:\n' $< $(FUZZ_SRCS_$*) >> $@.d
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRCS_$*)
	@$(HOSTCC) -std=gnu11 -DHOST_TEST -I. -o $(BUILD)/fuzz/seed_$* $(call test_src,seed_$*.c) \
		net/fabric/wire.c kernel/crc.c kernel/siphash.c kernel/scrypt.c $(SEED_SRCS_$*)
	@$(BUILD)/fuzz/seed_$* $(BUILD)/fuzz/seeds_$*

-include $(FUZZ_BINS:=.d)

fuzz-build: $(FUZZ_BINS)

#   make soak                 hostile, fault, racing and watchdog cases 10 times each beside a busy CPU
# (about 25 minutes here; SOAK_MATCH=, SOAK_REPEAT=): an outcome that rests on timing shows here.
SOAK_MATCH ?= hostile|spoof|fault|raced|intrud|relayed|watchdog
SOAK_REPEAT ?= 10
.PHONY: soak
soak: $(BUILD)/now.elf $(BUILD)/now-test.elf $(BUILD)/tests/ivshmem-racer
	@$(PYTHON) tests/run.py --build $(BUILD) --match '$(SOAK_MATCH)' --repeat $(SOAK_REPEAT) --hog

fuzz: $(FUZZ_BINS)
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz: $$t for $(FUZZ_SECONDS) s (corpus $(BUILD)/fuzz/corpus_$$t)"; \
		$(BUILD)/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
			-artifact_prefix=$(BUILD)/fuzz/$$t- \
			-max_len=8192 $(BUILD)/fuzz/corpus_$$t $(BUILD)/fuzz/seeds_$$t 2>&1 | \
			grep -E "^#[0-9]+ +DONE|^stat::number_of_executed_units|ERROR|SUMMARY|^==" ; \
		test $${PIPESTATUS[0]} -eq 0 || exit 1; \
	done

.PHONY: fuzz fuzz-build
