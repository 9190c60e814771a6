# Debian packages (issue 42, debian/): `make deb` builds gpufrac and
# gpufrac-slurm in a copy of the tree (dpkg-buildpackage, which cleans and
# builds in place, leaves this tree as it is) into $(O)/deb/, then runs
# lintian on them; `make check-deb` builds them and tests them
# (tests/deb/packages.sh: installed, upgraded, removed and purged by dpkg
# in a throwaway root). Both take minutes: .ci/run runs check-deb beside
# `make check`.
# check-deb runs systemd-analyze verify on the unit installed.
DEPS      += debhelper lintian systemd
DEB_DIR    = $(O)/deb
DEB_SRC    = $(DEB_DIR)/gpufrac-$(VERSION)
DEB_ARCH   = $(shell dpkg-architecture -qDEB_HOST_ARCH 2>/dev/null)
DEB_CHANGES = $(DEB_DIR)/gpufrac_$(VERSION)_$(DEB_ARCH).changes
# Build-Depends must hold every package the build needs but the
# build-essential ones.
DEB_BUILD_DEPS = $(filter-out gcc make libc6-dev,$(BUILD_DEPS))
DEB_UNSET  = MAKEFLAGS MFLAGS MAKELEVEL O SANITIZE \
	     $(foreach a,$(MAKEOVERRIDES),$(firstword $(subst =, ,$(subst :=,=,$(a)))))
PHONY     += deb check-deb

deb: $(DEPS_STAMP)
	@v=$$(dpkg-parsechangelog -l debian/changelog -S Version) && \
	    [ "$$v" = '$(VERSION)' ] || { echo "gpufrac: debian/changelog" \
	    "is at version '$$v', the Makefile's VERSION at '$(VERSION)'" >&2; \
	    exit 1; }
	@for p in $(DEB_BUILD_DEPS); do \
	    grep -q "^\(Build-Depends:\)\? *$$p *\([,(]\|$$\)" debian/control || \
	    { echo "gpufrac: '$$p' (BUILD_DEPS) is not in debian/control's" \
	      "Build-Depends" >&2; exit 1; }; \
	done
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC)
	# The sources as git sees them, committed or not, and no build output.
	git ls-files -z -co --exclude-standard >$(DEB_DIR)/sources
	tar -c --null -T $(DEB_DIR)/sources -f - | tar -x -C $(DEB_SRC) -f -
	# Debian's flags and paths only: none of this make's variables (O,
	# SANITIZE, CFLAGS... given on its command line are in the
	# environment, and in MAKEFLAGS for a sub-make).
	cd $(DEB_SRC) && env $(addprefix -u ,$(DEB_UNSET)) \
	    CUDA_HOME=$(abspath $(CUDA_HOME)) \
	    dpkg-buildpackage -us -uc -b -Jauto >../build.log 2>&1 || \
	    { tail -n 40 ../build.log; exit 1; }
	lintian --fail-on error,warning --info $(DEB_CHANGES)

# The test needs root (exit 77 otherwise: skipped, saying so).
check-deb: deb all $(O)/tests/clients/cuclient_linked
	$(RUN_ENV) DEB_DIR=$(abspath $(DEB_DIR)) bash tests/deb/packages.sh; \
	    rc=$$?; [ $$rc = 77 ] || exit $$rc
