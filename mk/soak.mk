# make soak: the chaos soak of tests/soak/, then its honest one
# (SOAK_SECONDS each, SOAK_SEED, see tests/soak/soak.c). Its driver asks the daemon as gpufracctl does
# (tools/ctl_query), reads gpufracctl's JSON with jansson (in DEPS for
# the OCI hook) and starts children as the benchmarks do (bench/harness);
# its client links the (simulated) driver, as the *_linked test clients
# do. tests/integration/soak.sh and soak_honest.sh run short ones.
SOAK_CLIENT_OBJ = $(O)/tests/soak/soak_client.o $(O)/tests/soak/soak_kinds.o \
    $(O)/tests/soak/soak_uses.o
SOAK_OBJ    = $(filter-out $(SOAK_CLIENT_OBJ),$(call objs,tests/soak/*.c))
SOAK        = $(O)/tests/soak/soak $(O)/tests/soak/soak_client
CHECK_DEPS += $(SOAK)
PHONY      += soak

$(SOAK_OBJ): private CPPFLAGS += -Itools -Ibench -Itests/simcuda
$(O)/tests/soak/soak: $(SOAK_OBJ) $(O)/bench/harness.o \
    $(O)/tools/ctl_query.o $(O)/tools/ctl_print.o $(O)/tools/ctl_table.o \
    $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) -ldl -ljansson
$(O)/tests/soak/soak_client: $(SOAK_CLIENT_OBJ) $(COMMON_LIB) $(SIM)
	$(CC) -o $@ $(SOAK_CLIENT_OBJ) $(COMMON_LIB) $(ALL_LDFLAGS) \
	    -L$(O)/tests/simcuda -l:libcuda.so.1 -lpthread

soak: all $(SOAK)
	$(RUN_ENV) $(O)/tests/soak/soak
	$(RUN_ENV) SOAK_MODE=honest $(O)/tests/soak/soak
