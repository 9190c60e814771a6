# The fuzzer of gpufracd's message handling (fuzz/README).
#   make fuzz [FUZZ_SECONDS=60] [FUZZ_DECODER_SECONDS=20]
#             [FUZZ_LIAR_SECONDS=20]
#                                 build it with clang and libFuzzer, run the
#                                 stateful target on a scratch copy of
#                                 fuzz/corpus, then the decoder target
#                                 (from fuzz/corpus-decoder), then the liar
#                                 target (fuzz/liars.c); the last line is
#                                 {"stateful":{"execs":N,"crashes":M},
#                                 "decoder":{...},"liar":{...}}
#   make fuzz-seeds               write fuzz/corpus again (fuzz/seeds.c), and
#                                 the decoder target's fuzz/corpus-decoder
#                                 (fuzz/seeds_decoder.c)
# make check replays fuzz/corpus and fuzz/regress, and fuzz/corpus-decoder
# through the decoder target, with $(FUZZ_REPLAY): the same harness built
# with $(CC), the build's sanitizer, and no libFuzzer.

FUZZ_SECONDS ?= 60
FUZZ_DECODER_SECONDS ?= 20
FUZZ_LIAR_SECONDS ?= 20
FUZZ_CC      ?= clang
FUZZ_SAN      = -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		-fno-omit-frame-pointer
FUZZ_CFLAGS   = -std=c11 $(WARNINGS) -g -O1 -MMD -MP $(FUZZ_SAN)
FUZZ_SRC      = fuzz/harness.c fuzz/peers.c fuzz/fakes.c fuzz/configs.c \
		fuzz/invariants.c fuzz/liars.c fuzz/bare.c fuzz/bare_check.c
# The machine under the daemon: what fuzz/fakes.c stands in for.
FUZZ_WRAP     = $(addprefix -Wl$(FUZZ_COMMA)--wrap=,clock_gettime pidfd_signal \
		devices_discover devices_checkpoint_api nvml_open nvml_ready \
		nvml_procs nvml_used nvml_close procid_read log_errx \
		jitter_ms pidfd_start_ms unshimmed_see)
FUZZ_COMMA   := ,

# libFuzzer's build: the daemon and common/ again with clang, coverage
# and ASan; the harness with ASan only (its own branches are not what the
# fuzzer should chase).
FUZZ_LF       = $(O)/fuzz/lf
FUZZ_LF_OBJ   = $(patsubst %.c,$(FUZZ_LF)/%.o,$(filter-out daemon/gpufracd.c,\
		$(wildcard daemon/*.c)) $(wildcard common/*.c))
FUZZ_LF_HOBJ  = $(patsubst %.c,$(FUZZ_LF)/%.o,$(FUZZ_SRC))
FUZZER        = $(O)/fuzz/gpufracd-fuzz
FUZZ_REPLAY   = $(O)/fuzz/replay
FUZZ_REPLAY_OBJ = $(patsubst %.c,$(O)/%.o,$(FUZZ_SRC) fuzz/replay.c)
FUZZ_SEEDS    = $(O)/fuzz/seeds
FUZZ_DSEEDS   = $(O)/fuzz/seeds-decoder

# clang's libFuzzer and sanitizer runtimes are libclang-rt-14-dev, only
# recommended by clang's own packages; llvm-14 has llvm-symbolizer.
DEPS         += clang libclang-rt-14-dev llvm-14
CHECK_DEPS   += $(FUZZ_REPLAY)
PHONY        += fuzz fuzz-seeds

$(FUZZ_LF)/fuzz/%.o: fuzz/%.c $(FLAGS_STAMP) mk/fuzz.mk
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_LF)/%.o: %.c $(FLAGS_STAMP) mk/fuzz.mk
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link \
	    -c $< -o $@

$(FUZZER): $(FUZZ_LF_HOBJ) $(FUZZ_LF_OBJ)
	$(FUZZ_CC) -o $@ $^ -fsanitize=fuzzer $(FUZZ_SAN) $(FUZZ_WRAP) \
	    $(DAEMON_LIBS) -lpthread

$(FUZZ_REPLAY): $(FUZZ_REPLAY_OBJ) $(DAEMON_OBJ) $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS) $(FUZZ_WRAP) $(DAEMON_LIBS) -lpthread

$(FUZZ_SEEDS): $(O)/fuzz/seeds.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS)

$(FUZZ_DSEEDS): $(O)/fuzz/seeds_decoder.o $(COMMON_LIB)
	$(CC) -o $@ $^ $(ALL_LDFLAGS)

# Both targets run whatever the first found; the status says if either
# found something.
fuzz: $(FUZZER)
	@FUZZ_TARGET=stateful fuzz/run.sh $(FUZZER) $(FUZZ_SECONDS) \
	    $(O)/fuzz/run >$(O)/fuzz/stateful.out; s=$$?; \
	FUZZ_TARGET=decoder FUZZ_CORPORA=fuzz/corpus-decoder fuzz/run.sh $(FUZZER) \
	    $(FUZZ_DECODER_SECONDS) $(O)/fuzz/run-decoder \
	    >$(O)/fuzz/decoder.out; d=$$?; \
	FUZZ_TARGET=liar FUZZ_CORPORA=fuzz/regress-liar fuzz/run.sh $(FUZZER) \
	    $(FUZZ_LIAR_SECONDS) $(O)/fuzz/run-liar \
	    >$(O)/fuzz/liar.out; l=$$?; \
	grep -v '^{' $(O)/fuzz/stateful.out $(O)/fuzz/decoder.out \
	    $(O)/fuzz/liar.out; \
	printf '{"stateful":%s,"decoder":%s,"liar":%s}\n' \
	    "$$(tail -n 1 $(O)/fuzz/stateful.out)" \
	    "$$(tail -n 1 $(O)/fuzz/decoder.out)" \
	    "$$(tail -n 1 $(O)/fuzz/liar.out)"; \
	[ $$s -eq 0 ] && [ $$d -eq 0 ] && [ $$l -eq 0 ]

fuzz-seeds: $(FUZZ_SEEDS) $(FUZZ_DSEEDS)
	$(FUZZ_SEEDS) fuzz/corpus
	mkdir -p fuzz/corpus-decoder
	$(FUZZ_DSEEDS) fuzz/corpus-decoder

-include $(wildcard $(FUZZ_LF)/*/*.d)
