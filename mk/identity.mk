# What reading every counted process's identity again costs the driver's
# look (bench/identity.c, issue 39; a few seconds).
PHONY += bench-identity

$(O)/bench/identity.o: private CPPFLAGS += -Idaemon
$(O)/bench/identity: $(O)/bench/identity.o $(O)/daemon/procid.o \
		$(O)/daemon/pidfd.o $(COMMON_LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $^

bench-identity: $(O)/bench/identity
	$(O)/bench/identity
