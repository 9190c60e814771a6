# gpufrac: fractional GPU memory sharing. `make`, `make check`, `make demo`,
# `make bench`, `make bench-share` (bench/).
# CC, CFLAGS, LDFLAGS, PREFIX, DESTDIR, CUDA_HOME may be overridden;
# SANITIZE=address or SANITIZE=thread builds everything with a sanitizer.

VERSION    = 0.1.0
PREFIX    ?= /usr/local
SYSCONFDIR ?= /etc
LIBDIR    ?= $(PREFIX)/lib
LIBEXECDIR ?= $(PREFIX)/libexec
# Container engines read CDI specs here, whatever PREFIX is.
CDIDIR    ?= /etc/cdi
MANDIR    ?= $(PREFIX)/share/man
CUDA_HOME ?= /usr/local/cuda
PYTHON    ?= /usr/bin/python3

.DEFAULT_GOAL := all

CFLAGS  ?= -O2 -g
WARNINGS = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CPPFLAGS += -D_GNU_SOURCE -DGPUFRAC_VERSION='"$(VERSION)"' \
	    -DGPUFRAC_LIBDIR='"$(LIBDIR)"' -DGPUFRAC_LIBEXECDIR='"$(LIBEXECDIR)"' \
	    -Iinclude -Icommon -isystem $(CUDA_HOME)/include
ifeq ($(SANITIZE),address)
SAN = -fsanitize=address,undefined -fno-omit-frame-pointer \
      -fno-sanitize-recover=undefined
else ifeq ($(SANITIZE),thread)
SAN = -fsanitize=thread
else ifneq ($(SANITIZE),)
$(error SANITIZE must be address or thread, not '$(SANITIZE)')
endif
ALL_CFLAGS  = -std=c11 $(WARNINGS) -fPIC -fvisibility=hidden -MMD -MP \
	      $(SAN) $(CFLAGS)
ALL_LDFLAGS = $(SAN) $(LDFLAGS)

# Everything but deps/clean/uninstall needs the CUDA headers.
ifneq ($(filter-out deps clean uninstall,$(or $(MAKECMDGOALS),all)),)
ifeq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
$(error cannot find $(CUDA_HOME)/include/cuda.h: install the CUDA toolkit or set CUDA_HOME)
endif
endif

# Rebuild everything when the flags change (a sanitizer build, say): the
# stamp is rewritten only when its content would differ.
FLAGS_STAMP = .build-flags
BUILD_FLAGS = $(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS)
$(FLAGS_STAMP): FORCE
	@echo '$(BUILD_FLAGS)' | cmp -s - $@ 2>/dev/null || \
	    echo '$(BUILD_FLAGS)' > $@
FORCE:

COMMON_OBJ  = $(patsubst %.c,%.o,$(wildcard common/*.c))
COMMON_LIB  = common/libgfcommon.a
SHIM_OBJ    = $(patsubst %.c,%.o,$(wildcard shim/*.c))
SHIM        = shim/libgpufrac.so
DAEMON_MAIN = daemon/gpufracd.o
DAEMON_OBJ  = $(filter-out $(DAEMON_MAIN),$(patsubst %.c,%.o,$(wildcard daemon/*.c)))
DAEMON      = daemon/gpufracd
CTL_OBJ     = $(patsubst %.c,%.o,$(wildcard tools/gpufracctl.c tools/ctl_*.c))
CTL         = tools/gpufracctl
BENCH_OBJ   = $(patsubst %.c,%.o,$(wildcard bench/bench*.c))
BENCH       = bench/bench
SHARE_OBJ   = $(patsubst %.c,%.o,$(filter-out bench/share_tenant.c, \
	      $(wildcard bench/share*.c)))
SHARE       = bench/share bench/share_tenant
NVML_OBJ    = $(patsubst %.c,%.o,$(wildcard tests/simcuda/nvml*.c))
SIM_OBJ     = $(filter-out $(NVML_OBJ),$(patsubst %.c,%.o,$(wildcard tests/simcuda/*.c)))
SIM         = tests/simcuda/libcuda.so.1
NVML        = tests/simcuda/libnvidia-ml.so.1
UNIT        = $(patsubst %.c,%,$(wildcard tests/unit/test_*.c))
CLIENTS     = $(patsubst %.c,%,$(wildcard tests/clients/*.c))
OCI_OBJ     = $(patsubst %.c,%.o,$(wildcard oci/*.c))
OCI_HOOK    = $(if $(OCI_OBJ),oci/gpufrac-oci-hook)
# The Slurm plugin is built where Slurm's header is (libslurm-dev).
SPANK_H    ?= /usr/include/slurm/spank.h
SPANK_OBJ   = $(patsubst %.c,%.o,$(wildcard slurm/*.c))
SPANK       = $(if $(and $(SPANK_OBJ),$(wildcard $(SPANK_H))),slurm/gpufrac_spank.so)
BINS        = $(SHIM) $(DAEMON) $(CTL) $(SIM) $(NVML) $(OCI_HOOK) $(SPANK)
MAN         = man/gpufracctl.1 man/gpufrac.conf.5 man/libgpufrac.7 \
	      man/gpufracd.8 man/gpufrac-oci-hook.8 man/gpufrac_spank.8

all: $(BINS)

%.o: %.c $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(COMMON_LIB): $(COMMON_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(SHIM): $(SHIM_OBJ) $(COMMON_LIB) shim/libgpufrac.map
	$(CC) -shared -o $@ $(SHIM_OBJ) $(COMMON_LIB) $(ALL_LDFLAGS) \
	    -Wl,--version-script=shim/libgpufrac.map -Wl,-z,defs -Wl,-z,now \
	    -ldl -lpthread

$(DAEMON): $(DAEMON_MAIN) $(DAEMON_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -linih -ldl

$(CTL): $(CTL_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS)

# The OCI hook reads the runtime's state JSON with jansson.
$(OCI_HOOK): $(OCI_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -ljansson
# Its unit tests link its modules, all but its main (oci/hook.o).
tests/unit/test_oci_%: tests/unit/test_oci_%.o \
    $(filter-out oci/hook.o,$(OCI_OBJ)) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -lcmocka -ljansson

# The SPANK plugin is loaded by srun, sbatch, slurmd and slurmstepd: it
# exports only the slurm_spank_* entry points and the plugin's identity.
# No -z defs: the spank_* functions it calls come from the program that
# loads it (libslurmfull), not from a library it could link. Those
# programs are built without a sanitizer, and one preloaded into
# slurmstepd can deadlock the tasks it forks (libasan's allocator lock),
# so the plugin and its copy of common/ are always built without one.
SPANK_CFLAGS = $(filter-out $(SAN),$(ALL_CFLAGS))
SPANK_COMMON = $(patsubst common/%.c,slurm/common_%.o,$(wildcard common/*.c))
$(SPANK_OBJ): slurm/%.o: slurm/%.c $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS) $(SPANK_CFLAGS) -c $< -o $@
slurm/common_%.o: common/%.c $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS) $(SPANK_CFLAGS) -c $< -o $@
slurm/libgfcommon.a: $(SPANK_COMMON)
	rm -f $@
	$(AR) rcs $@ $^
$(SPANK): $(SPANK_OBJ) slurm/libgfcommon.a slurm/gpufrac_spank.map
	$(CC) -shared -o $@ $(SPANK_OBJ) slurm/libgfcommon.a \
	    $(filter-out $(SAN),$(ALL_LDFLAGS)) \
	    -Wl,--version-script=slurm/gpufrac_spank.map

# The benchmark measures the shim's allocation table as the shim builds it.
$(BENCH): $(BENCH_OBJ) bench/harness.o shim/alloc_table.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -ldl -lpthread -lm

# The sharing benchmark asks the daemon as gpufracctl does (tools/ctl_*);
# its tenants find the driver with dlopen, as numba does.
$(SHARE_OBJ): CPPFLAGS += -Itools
bench/share: $(SHARE_OBJ) bench/harness.o tools/ctl_query.o \
    tools/ctl_print.o tools/ctl_table.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -lm
bench/share_tenant: bench/share_tenant.o bench/harness.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -ldl

# The simulated driver exports the real driver's names, unversioned.
$(SIM_OBJ): ALL_CFLAGS += -fvisibility=default
$(SIM): $(SIM_OBJ) $(COMMON_LIB) tests/simcuda/libcuda.map
	$(CC) -shared -o $@ $(SIM_OBJ) $(COMMON_LIB) $(ALL_LDFLAGS) \
	    -Wl,-soname,libcuda.so.1 -Wl,--version-script=tests/simcuda/libcuda.map \
	    -Wl,-z,defs -lpthread -lrt
	ln -sf libcuda.so.1 tests/simcuda/libcuda.so

# The simulated NVML reads the same machine with the same code: it links
# the simulator's objects (one copy of them per library, each hidden by
# its version script) and exports the nvml* names only.
$(NVML_OBJ): ALL_CFLAGS += -fvisibility=default
$(NVML): $(NVML_OBJ) $(SIM_OBJ) $(COMMON_LIB) tests/simcuda/libnvidia-ml.map
	$(CC) -shared -o $@ $(NVML_OBJ) $(SIM_OBJ) $(COMMON_LIB) $(ALL_LDFLAGS) \
	    -Wl,-soname,libnvidia-ml.so.1 \
	    -Wl,--version-script=tests/simcuda/libnvidia-ml.map \
	    -Wl,-z,defs -lpthread -lrt
	ln -sf libnvidia-ml.so.1 tests/simcuda/libnvidia-ml.so

# Unit tests of the daemon link its modules; the others only common/.
tests/unit/test_daemon_%: tests/unit/test_daemon_%.o $(DAEMON_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -lcmocka -linih -ldl -lpthread
tests/unit/test_%: tests/unit/test_%.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -lcmocka -ldl -lpthread

# Clients named *_linked link the (simulated) driver; the others find it
# with dlopen/dlsym or cuGetProcAddress as real frameworks do.
tests/clients/%_linked: tests/clients/%_linked.o $(COMMON_LIB) $(SIM)
	$(CC) -o $@ $< $(COMMON_LIB) $(ALL_LDFLAGS) -Ltests/simcuda \
	    -l:libcuda.so.1 -ldl -lpthread
# nvml_query links the simulated NVML, and no libcuda.
tests/clients/nvml_query: tests/clients/nvml_query.o $(COMMON_LIB) $(NVML)
	$(CC) -o $@ $< $(COMMON_LIB) $(ALL_LDFLAGS) -Ltests/simcuda \
	    -l:libnvidia-ml.so.1 -ldl -lpthread
tests/clients/%: tests/clients/%.o $(COMMON_LIB)
	$(CC) -o $@ $< $(COMMON_LIB) $(ALL_LDFLAGS) -ldl -lpthread

check: all $(UNIT) $(CLIENTS) $(SHARE)
	PYTHON=$(PYTHON) SANITIZE=$(SANITIZE) tests/run.sh

demo: all tests/clients/cuclient_linked
	tools/demo.sh

bench: all $(BENCH)
	$(BENCH)

bench-share: all $(SHARE)
	bench/share

deps:
	@pkgs="gcc make libc6-dev libinih-dev libcmocka-dev libjansson-dev python3 python3-numba strace valgrind crun slurm-wlm munge libslurm-dev"; \
	if [ "$$(id -u)" = 0 ]; then \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends $$pkgs; \
	else \
		echo "run as root: apt-get install -y --no-install-recommends $$pkgs"; \
	fi

install: all
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PREFIX)/sbin \
	    $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SYSCONFDIR)/gpufrac \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8
	install -m 755 $(SHIM) $(DESTDIR)$(LIBDIR)/libgpufrac.so
	install -m 755 $(DAEMON) $(DESTDIR)$(PREFIX)/sbin/gpufracd
	install -m 755 $(CTL) $(DESTDIR)$(PREFIX)/bin/gpufracctl
	[ -e $(DESTDIR)$(SYSCONFDIR)/gpufrac/gpufrac.conf ] || \
	    install -m 644 etc/gpufrac.conf $(DESTDIR)$(SYSCONFDIR)/gpufrac/gpufrac.conf
	install -m 644 man/gpufracctl.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/gpufrac.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 man/libgpufrac.7 $(DESTDIR)$(MANDIR)/man7/
	install -m 644 man/gpufracd.8 man/gpufrac-oci-hook.8 \
	    man/gpufrac_spank.8 $(DESTDIR)$(MANDIR)/man8/
	install -d $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(CDIDIR)
	install -m 755 $(OCI_HOOK) $(DESTDIR)$(LIBEXECDIR)/gpufrac-oci-hook
	# The spec names the default socket, not the installer's own.
	GPUFRAC_SOCKET= $(CTL) cdi --shim $(LIBDIR)/libgpufrac.so \
	    --hook $(LIBEXECDIR)/gpufrac-oci-hook \
	    >$(DESTDIR)$(CDIDIR)/gpufrac.json.tmp
	mv $(DESTDIR)$(CDIDIR)/gpufrac.json.tmp $(DESTDIR)$(CDIDIR)/gpufrac.json
	# The Slurm plugin, where it was built; plugstack.conf is the admin's.
	$(if $(SPANK),install -d $(DESTDIR)$(LIBDIR)/slurm)
	$(if $(SPANK),install -m 755 $(SPANK) $(DESTDIR)$(LIBDIR)/slurm/gpufrac_spank.so)

# The configuration file is the operator's: uninstall leaves it.
uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libgpufrac.so \
	    $(DESTDIR)$(PREFIX)/sbin/gpufracd $(DESTDIR)$(PREFIX)/bin/gpufracctl \
	    $(DESTDIR)$(MANDIR)/man1/gpufracctl.1 \
	    $(DESTDIR)$(MANDIR)/man5/gpufrac.conf.5 \
	    $(DESTDIR)$(MANDIR)/man7/libgpufrac.7 \
	    $(DESTDIR)$(MANDIR)/man8/gpufracd.8 \
	    $(DESTDIR)$(MANDIR)/man8/gpufrac-oci-hook.8 \
	    $(DESTDIR)$(LIBEXECDIR)/gpufrac-oci-hook $(DESTDIR)$(CDIDIR)/gpufrac.json \
	    $(DESTDIR)$(MANDIR)/man8/gpufrac_spank.8 \
	    $(DESTDIR)$(LIBDIR)/slurm/gpufrac_spank.so

clean:
	rm -f $(BINS) $(BENCH) $(SHARE) tests/simcuda/libcuda.so tests/simcuda/libnvidia-ml.so \
	    $(COMMON_LIB) slurm/libgfcommon.a $(UNIT) $(CLIENTS) \
	    $(FLAGS_STAMP) */*.o */*.d tests/*/*.o tests/*/*.d

.PHONY: all check demo bench bench-share deps install uninstall clean FORCE
# Keep the objects of tests and clients that make would see as intermediate.
.SECONDARY:

-include $(wildcard */*.d tests/*/*.d)
