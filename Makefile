# gpufrac: fractional GPU memory sharing. `make`, `make check`, `make demo`,
# `make bench`, `make bench-share`, `make bench-swap` (bench/), `make soak` (mk/soak.mk),
# `make fuzz` (mk/fuzz.mk), `make bench-looks` (mk/looks.mk),
# `make bench-identity` (mk/identity.mk), `make deb` and `make check-deb`
# (mk/deb.mk), `make clean`.
# CC, CFLAGS, LDFLAGS, PREFIX, DESTDIR, CUDA_HOME, the directories below
# may be overridden (LIBDIR, LIBEXECDIR and SYSCONFDIR are compiled in);
# SANITIZE=address or SANITIZE=thread builds everything with a sanitizer.
# Everything built goes under O (default build/), laid out like the source
# tree: build/daemon/gpufracd, build/shim/libgpufrac.so, ... Two builds
# can live side by side: `make check O=build-asan SANITIZE=address`.

VERSION    = 0.1.0
PREFIX    ?= /usr/local
SYSCONFDIR ?= /etc
LIBDIR    ?= $(PREFIX)/lib
LIBEXECDIR ?= $(PREFIX)/libexec
# The Slurm plugin: Debian's Slurm looks in LIBDIR/slurm-wlm (debian/rules).
SPANKDIR  ?= $(LIBDIR)/slurm
DATADIR   ?= $(PREFIX)/share
DOCDIR    ?= $(DATADIR)/doc/gpufrac
# Container engines read CDI specs here, whatever PREFIX is.
CDIDIR    ?= /etc/cdi
MANDIR    ?= $(PREFIX)/share/man
# systemd reads units here, whatever PREFIX is: where its pkg-config file
# says, else where every systemd looks.
SYSTEMDUNITDIR ?= $(or $(shell pkg-config --variable=systemdsystemunitdir \
		  systemd 2>/dev/null),/lib/systemd/system)
CUDA_HOME ?= /usr/local/cuda
PYTHON    ?= /usr/bin/python3
O         ?= build

.DEFAULT_GOAL := all

CFLAGS  ?= -O2 -g
WARNINGS = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
CPPFLAGS += -D_GNU_SOURCE -DGPUFRAC_VERSION='"$(VERSION)"' \
	    -Iinclude -Icommon -isystem $(CUDA_HOME)/include
# The paths compiled in, given only to the objects that compile them in
# (below), so that a build for other paths recompiles those alone.
PATH_DEFS = -DGPUFRAC_LIBDIR='"$(LIBDIR)"' -DGPUFRAC_LIBEXECDIR='"$(LIBEXECDIR)"' \
	    -DGPUFRAC_SYSCONFDIR='"$(SYSCONFDIR)"'
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

# Before anything is built (every object needs the flags stamp), the
# Debian packages the goals need: tools/deps.sh installs the missing ones
# as root, as `make deps` does, or names them and the command in one line
# and stops. Each list found installed is a line of the stamp, so that
# dpkg is asked once per build tree and list, apt only when one is missing.
DEPS_GOALS  = $(filter-out all install demo deps clean uninstall,\
	      $(or $(MAKECMDGOALS),all))
DEPS_NEEDED = $(strip $(if $(DEPS_GOALS),$(DEPS),$(BUILD_DEPS)))
DEPS_STAMP  = $(O)/.deps
$(DEPS_STAMP): FORCE
	@grep -qxF '$(DEPS_NEEDED)' $@ 2>/dev/null || \
	    { tools/deps.sh $(DEPS_NEEDED) && mkdir -p $(@D) && \
	      echo '$(DEPS_NEEDED)' >>$@; }

# Rebuild everything when the flags change (a sanitizer build, say): the
# stamp is rewritten only when its content would differ. Flags added for
# some objects only are `private`: a prerequisite (the stamp) must not
# see them, or it would change with whichever object reached it first.
FLAGS_STAMP = $(O)/.build-flags
BUILD_FLAGS = $(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS)
$(FLAGS_STAMP): FORCE | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo '$(BUILD_FLAGS)' | cmp -s - $@ 2>/dev/null || \
	    echo '$(BUILD_FLAGS)' > $@
FORCE:
# The same for the paths, which only these objects compile in.
PATHS_STAMP = $(O)/.paths
PATH_OBJS   = $(O)/daemon/gpufracd.o $(O)/tools/ctl_cdi.o $(O)/slurm/opts.o
$(PATHS_STAMP): FORCE | $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo '$(PATH_DEFS)' | cmp -s - $@ 2>/dev/null || \
	    echo '$(PATH_DEFS)' > $@
$(PATH_OBJS): private CPPFLAGS += $(PATH_DEFS)
$(PATH_OBJS): $(PATHS_STAMP)

# The objects of the sources matching a pattern, under $(O).
objs = $(patsubst %.c,$(O)/%.o,$(wildcard $(1)))
COMMON_OBJ  = $(call objs,common/*.c)
COMMON_LIB  = $(O)/common/libgfcommon.a
SHIM_OBJ    = $(call objs,shim/*.c)
SHIM        = $(O)/shim/libgpufrac.so
DAEMON_MAIN = $(O)/daemon/gpufracd.o
DAEMON_OBJ  = $(filter-out $(DAEMON_MAIN),$(call objs,daemon/*.c))
DAEMON      = $(O)/daemon/gpufracd
CTL_OBJ     = $(call objs,tools/gpufracctl.c tools/ctl_*.c)
CTL         = $(O)/tools/gpufracctl
BENCH_OBJ   = $(call objs,bench/bench*.c)
BENCH       = $(O)/bench/bench
SHARE_OBJ   = $(filter-out $(O)/bench/share_tenant.o,$(call objs,bench/share*.c))
SHARE       = $(O)/bench/share $(O)/bench/share_tenant
NVML_OBJ    = $(call objs,tests/simcuda/nvml*.c)
SIM_OBJ     = $(filter-out $(NVML_OBJ),$(call objs,tests/simcuda/*.c))
SIM         = $(O)/tests/simcuda/libcuda.so.1
NVML        = $(O)/tests/simcuda/libnvidia-ml.so.1
UNIT        = $(patsubst %.c,$(O)/%,$(wildcard tests/unit/test_*.c))
CLIENTS     = $(patsubst %.c,$(O)/%,$(wildcard tests/clients/*.c))
OCI_OBJ     = $(call objs,oci/*.c)
OCI_HOOK    = $(if $(OCI_OBJ),$(O)/oci/gpufrac-oci-hook)
# The Slurm plugin is built where Slurm's header is (libslurm-dev).
SPANK_H    ?= /usr/include/slurm/spank.h
SPANK_OBJ   = $(call objs,slurm/*.c)
SPANK       = $(if $(and $(SPANK_OBJ),$(wildcard $(SPANK_H))),$(O)/slurm/gpufrac_spank.so)
# What the programs link beyond libc; mk/*.mk may add to these.
DAEMON_LIBS = -linih -ldl
CTL_LIBS    =
# Debian packages: BUILD_DEPS to build (make, make install, make demo),
# DEPS for the rest too (tests, benchmarks, engines tested); `make deps`
# installs DEPS.
BUILD_DEPS  = gcc make libc6-dev libinih-dev libjansson-dev nettle-dev
DEPS        = $(BUILD_DEPS) libcmocka-dev python3 python3-numba strace \
	      valgrind crun slurm-wlm munge libslurm-dev
BINS        = $(SHIM) $(DAEMON) $(CTL) $(SIM) $(NVML) $(OCI_HOOK) $(SPANK)
MAN         = man/gpufracctl.1 man/gpufrac.conf.5 man/libgpufrac.7 \
	      man/gpufracd.8 man/gpufrac-oci-hook.8 man/gpufrac_spank.8
# What `make check` needs built beyond `all`.
CHECK_DEPS  = $(UNIT) $(CLIENTS) $(SHARE)
PHONY       = all check demo bench bench-share bench-swap deps install uninstall clean FORCE

# Parts with a make file of their own (the fuzzer, the soak) add to the
# lists above and bring their own targets.
include $(wildcard mk/*.mk)

all: $(BINS)

$(O)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(COMMON_LIB): $(COMMON_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# The shim is on the hot path of other programs: link-time optimisation
# inlines its fast path across files (hook, table, lease). Fat objects: the
# unit tests and the benchmark link some of them without it.
SHIM_LTO = -flto=auto -ffat-lto-objects
$(SHIM_OBJ): private ALL_CFLAGS += $(SHIM_LTO)
# Deprecated entry points (cuDeviceComputeCapability) are the driver's
# all the same: the shim gates them without a warning for each.
$(SHIM_OBJ): private CPPFLAGS += -DCUDA_ENABLE_DEPRECATED
$(SHIM): $(SHIM_OBJ) $(COMMON_LIB) shim/libgpufrac.map
	$(CC) -shared -o $@ $(SHIM_OBJ) $(COMMON_LIB) $(ALL_LDFLAGS) $(SHIM_LTO) \
	    -Wl,--version-script=shim/libgpufrac.map -Wl,-z,defs -Wl,-z,now \
	    -ldl -lpthread

$(DAEMON): $(DAEMON_MAIN) $(DAEMON_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) $(DAEMON_LIBS)

$(CTL): $(CTL_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) $(CTL_LIBS)

# The OCI hook reads the runtime's state JSON with jansson, and hashes
# long container ids with nettle's SHA-256.
OCI_LIBS    = -ljansson -lnettle
$(OCI_HOOK): $(OCI_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) $(OCI_LIBS)
# Its unit tests link its modules, all but its main (oci/hook.o).
$(O)/tests/unit/test_oci_%: $(O)/tests/unit/test_oci_%.o \
    $(filter-out $(O)/oci/hook.o,$(OCI_OBJ)) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -lcmocka $(OCI_LIBS)

# The SPANK plugin is loaded by srun, sbatch, slurmd and slurmstepd: it
# exports only the slurm_spank_* entry points and the plugin's identity.
# No -z defs: the spank_* functions it calls come from the program that
# loads it (libslurmfull), not from a library it could link. Those
# programs are built without a sanitizer, and one preloaded into
# slurmstepd can deadlock the tasks it forks (libasan's allocator lock),
# so the plugin and its copy of common/ are always built without one.
SPANK_CFLAGS = $(filter-out $(SAN),$(ALL_CFLAGS))
SPANK_COMMON = $(patsubst common/%.c,$(O)/slurm/common_%.o,$(wildcard common/*.c))
$(SPANK_OBJ): $(O)/slurm/%.o: slurm/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(SPANK_CFLAGS) -c $< -o $@
$(O)/slurm/common_%.o: common/%.c $(FLAGS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(SPANK_CFLAGS) -c $< -o $@
$(O)/slurm/libgfcommon.a: $(SPANK_COMMON)
	rm -f $@
	$(AR) rcs $@ $^
$(SPANK): $(SPANK_OBJ) $(O)/slurm/libgfcommon.a slurm/gpufrac_spank.map
	$(CC) -shared -o $@ $(SPANK_OBJ) $(O)/slurm/libgfcommon.a \
	    $(filter-out $(SAN),$(ALL_LDFLAGS)) \
	    -Wl,--version-script=slurm/gpufrac_spank.map

# The benchmark measures the shim's allocation table as the shim builds it.
$(BENCH): $(BENCH_OBJ) $(O)/bench/harness.o $(O)/shim/alloc_table.o \
    $(O)/shim/alloc_tab.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -ldl -lpthread -lm

# The sharing benchmark asks the daemon as gpufracctl does (tools/ctl_*);
# its tenants find the driver with dlopen, as numba does.
$(SHARE_OBJ): private CPPFLAGS += -Itools
$(O)/bench/share: $(SHARE_OBJ) $(O)/bench/harness.o $(O)/tools/ctl_query.o \
    $(O)/tools/ctl_print.o $(O)/tools/ctl_table.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -lm
$(O)/bench/share_tenant: $(O)/bench/share_tenant.o $(O)/bench/harness.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -ldl

# The simulated driver exports the real driver's names, unversioned.
$(SIM_OBJ): private ALL_CFLAGS += -fvisibility=default
# -Bsymbolic-functions: as in the real driver, its own references to its
# functions (cuGetProcAddress's table, calls between entry points) are its
# own, never an interposer's.
$(SIM): $(SIM_OBJ) $(COMMON_LIB) tests/simcuda/libcuda.map
	$(CC) -shared -o $@ $(SIM_OBJ) $(COMMON_LIB) $(ALL_LDFLAGS) \
	    -Wl,-soname,libcuda.so.1 -Wl,--version-script=tests/simcuda/libcuda.map \
	    -Wl,-Bsymbolic-functions -Wl,-z,defs -lpthread -lrt
	ln -sf libcuda.so.1 $(O)/tests/simcuda/libcuda.so

# The simulated NVML reads the same machine with the same code: it links
# the simulator's objects (one copy of them per library, each hidden by
# its version script) and exports the nvml* names only.
$(NVML_OBJ): private ALL_CFLAGS += -fvisibility=default
$(NVML): $(NVML_OBJ) $(SIM_OBJ) $(COMMON_LIB) tests/simcuda/libnvidia-ml.map
	$(CC) -shared -o $@ $(NVML_OBJ) $(SIM_OBJ) $(COMMON_LIB) $(ALL_LDFLAGS) \
	    -Wl,-soname,libnvidia-ml.so.1 \
	    -Wl,--version-script=tests/simcuda/libnvidia-ml.map \
	    -Wl,-z,defs -lpthread -lrt
	ln -sf libnvidia-ml.so.1 $(O)/tests/simcuda/libnvidia-ml.so

# Unit tests of the daemon link its modules; the others only common/.
$(O)/tests/unit/test_daemon_%: $(O)/tests/unit/test_daemon_%.o $(DAEMON_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -lcmocka $(DAEMON_LIBS) -lpthread
# The simulator's fork test links its objects (NVML's too) with a seam on
# pthread's lock, unlock and wait: it holds a thread inside each lock they take.
SIM_WRAP    = -Wl,--wrap=pthread_mutex_lock,--wrap=pthread_mutex_unlock \
	      -Wl,--wrap=pthread_cond_wait
$(O)/tests/unit/test_simcuda_%: $(O)/tests/unit/test_simcuda_%.o $(NVML_OBJ) \
    $(SIM_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) $(SIM_WRAP) -lcmocka -lpthread -lrt
$(O)/tests/unit/test_%: $(O)/tests/unit/test_%.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -lcmocka -ldl -lpthread

# Clients named *_linked link the (simulated) driver; the others find it
# with dlopen/dlsym or cuGetProcAddress as real frameworks do.
$(O)/tests/clients/%_linked: $(O)/tests/clients/%_linked.o $(COMMON_LIB) $(SIM)
	$(CC) -o $@ $< $(COMMON_LIB) $(ALL_LDFLAGS) -L$(O)/tests/simcuda \
	    -l:libcuda.so.1 -ldl -lpthread
# nvml_query links the simulated NVML, and no libcuda.
$(O)/tests/clients/nvml_query: $(O)/tests/clients/nvml_query.o $(COMMON_LIB) $(NVML)
	$(CC) -o $@ $< $(COMMON_LIB) $(ALL_LDFLAGS) -L$(O)/tests/simcuda \
	    -l:libnvidia-ml.so.1 -ldl -lpthread
$(O)/tests/clients/%: $(O)/tests/clients/%.o $(COMMON_LIB)
	$(CC) -o $@ $< $(COMMON_LIB) $(ALL_LDFLAGS) -ldl -lpthread

# Scripts find what was built in $BUILD.
RUN_ENV = BUILD=$(abspath $(O)) PYTHON=$(PYTHON) SANITIZE=$(SANITIZE)

# TESTS: only the tests whose file names contain one of these words.
check: all $(CHECK_DEPS)
	$(RUN_ENV) tests/run.sh $(TESTS)

demo: all $(O)/tests/clients/cuclient_linked
	$(RUN_ENV) tools/demo.sh

# BENCH_BASELINE=DIR (another build tree, e.g. of main): its gpufracd's
# round trip measured beside this one's, in turns, under the same load.
bench: all $(BENCH)
	$(BENCH)

# SHARE_DRIVER=real: on 16 GiB of the machine's GPU (bench/share -r);
# SHARE_ARGS: more options (-q, -n N, -s SEED).
SHARE_DRIVER ?= simulated
bench-share: all $(SHARE)
	$(O)/bench/share $(SHARE_FLAGS_$(SHARE_DRIVER)) $(SHARE_ARGS)
SHARE_FLAGS_simulated =
SHARE_FLAGS_real = -r
ifeq ($(filter simulated real,$(SHARE_DRIVER)),)
$(error SHARE_DRIVER must be simulated or real, not '$(SHARE_DRIVER)')
endif

# Host swap's engines on the simulated bus (bench/swap.sh, issue 21).
bench-swap: all $(O)/tests/clients/cuclient_linked
	bench/swap.sh $(O)

deps:
	@tools/deps.sh $(DEPS)

# The configuration is where SYSCONFDIR says, which gpufracd is built to
# read (GPUFRAC_SYSCONFDIR); the man pages, the README and the example
# file installed say that path, not the tree's /etc, and name the shim,
# the hook and the plugin where they are installed, not the tree's
# /usr/local (the Slurm plugin's directory first: it is in LIBDIR's).
SYSCONF_SED = sed -e 's|/etc/gpufrac/|$(SYSCONFDIR)/gpufrac/|g' \
	      -e 's|/usr/local/lib/slurm/|$(SPANKDIR)/|g' \
	      -e 's|/usr/local/libexec/|$(LIBEXECDIR)/|g' \
	      -e 's|/usr/local/lib/|$(LIBDIR)/|g'
MANS = man/gpufracctl.1 man/gpufrac.conf.5 man/libgpufrac.7 man/gpufracd.8 \
       man/gpufrac-oci-hook.8 man/gpufrac_spank.8

# What install copies, and only that: the simulated driver is the tests'.
INSTALLED   = $(SHIM) $(DAEMON) $(CTL) $(OCI_HOOK) $(SPANK)
install: $(INSTALLED)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PREFIX)/sbin \
	    $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(SYSCONFDIR)/gpufrac \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 \
	    $(DESTDIR)$(DOCDIR) $(DESTDIR)$(DATADIR)/gpufrac/grafana
	install -m 755 $(SHIM) $(DESTDIR)$(LIBDIR)/libgpufrac.so
	install -m 755 $(DAEMON) $(DESTDIR)$(PREFIX)/sbin/gpufracd
	install -m 755 $(CTL) $(DESTDIR)$(PREFIX)/bin/gpufracctl
	[ -e $(DESTDIR)$(SYSCONFDIR)/gpufrac/gpufrac.conf ] || \
	    { $(SYSCONF_SED) etc/gpufrac.conf \
	      >$(DESTDIR)$(SYSCONFDIR)/gpufrac/gpufrac.conf && \
	      chmod 644 $(DESTDIR)$(SYSCONFDIR)/gpufrac/gpufrac.conf; }
	for m in $(MANS); do \
	    d=$(DESTDIR)$(MANDIR)/man$${m##*.}/$${m#man/}; \
	    $(SYSCONF_SED) $$m >$$d && chmod 644 $$d || exit 1; \
	done
	$(SYSCONF_SED) README.md >$(DESTDIR)$(DOCDIR)/README.md
	chmod 644 $(DESTDIR)$(DOCDIR)/README.md
	install -m 644 etc/grafana/gpufrac.json \
	    $(DESTDIR)$(DATADIR)/gpufrac/grafana/gpufrac.json
	install -d $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(CDIDIR)
	install -m 755 $(OCI_HOOK) $(DESTDIR)$(LIBEXECDIR)/gpufrac-oci-hook
	# The spec names the default socket, not the installer's own.
	GPUFRAC_SOCKET= $(CTL) cdi --shim $(LIBDIR)/libgpufrac.so \
	    --hook $(LIBEXECDIR)/gpufrac-oci-hook \
	    >$(DESTDIR)$(CDIDIR)/gpufrac.json.tmp
	mv $(DESTDIR)$(CDIDIR)/gpufrac.json.tmp $(DESTDIR)$(CDIDIR)/gpufrac.json
	# The systemd unit, with this PREFIX's paths.
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@PREFIX@|$(PREFIX)|g' etc/gpufracd.service.in \
	    >$(DESTDIR)$(SYSTEMDUNITDIR)/gpufracd.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/gpufracd.service
	# The Slurm plugin, where it was built; plugstack.conf is the admin's.
	$(if $(SPANK),install -d $(DESTDIR)$(SPANKDIR))
	$(if $(SPANK),install -m 755 $(SPANK) $(DESTDIR)$(SPANKDIR)/gpufrac_spank.so)

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
	    $(DESTDIR)$(SPANKDIR)/gpufrac_spank.so \
	    $(DESTDIR)$(SYSTEMDUNITDIR)/gpufracd.service \
	    $(DESTDIR)$(DOCDIR)/README.md \
	    $(DESTDIR)$(DATADIR)/gpufrac/grafana/gpufrac.json

clean:
	rm -rf $(O)

.PHONY: $(PHONY)
# Keep the objects of tests and clients that make would see as intermediate.
.SECONDARY:

-include $(wildcard $(O)/*/*.d $(O)/tests/*/*.d)
