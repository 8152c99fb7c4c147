#!/bin/sh
# Long fuzzing run of one target with libFuzzer + AddressSanitizer + UndefinedBehaviorSanitizer:
#   tests/fuzz/run.sh [SECONDS=300] [TARGET=api]
# Targets (docs/fuzzing.md):
#   tokenizer  text bytes through the WordPiece tokenizer (two vocabulary sections)
#   api        text and raw ids through init / tokenize / encode / classify of a small model
#   model      edited weights blobs and vocabulary sections through init, then inference on what init accepts
#   registry   raw bytes through the registry matcher (three registries; edited tables through validate)
#   protocol   the firmware's line handling and command parser built for the host (tests/fuzz/fuzz_protocol.c)
# Needs clang with libFuzzer and the sanitizer runtimes (Debian: apt-get install clang libclang-rt-dev). Work
# files go to ${BERTL14_FUZZ_DIR:-build/fuzz}: the corpus grows in corpus/TARGET between runs, crash reproducers
# are written as crash-TARGET-<sha> (replay: build/fuzz/fuzz_TARGET FILE). On a shared machine run it under
# `nice -n 10`, one target at a time. BERTL14_FUZZ_KERNELS=dsp builds the library's DSP kernels (on the host's
# emulation of the intrinsics) instead of the portable ones: the api and model targets then run those.
# BERTL14_FUZZ_WEIGHTS=int8 builds the library for INT8 linear weights (BERTL14_WEIGHTS_INT8): the model target
# then edits and runs the INT8 twins of its models.
set -eu
SECONDS_TO_RUN=${1:-300}
TARGET=${2:-api}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=${BERTL14_FUZZ_DIR:-$ROOT/build/fuzz}
CC_FUZZ=${CC_FUZZ:-clang}
PY=${PYTHON:-python3}
command -v "$CC_FUZZ" >/dev/null || { echo "run.sh: $CC_FUZZ not found: apt-get install clang libclang-rt-dev (or set CC_FUZZ)" >&2; exit 2; }
LIB=$("$PY" -c "from bertl14_tools import cbuild; print(' '.join(map(str, cbuild.library_sources())))")
INC="-I$ROOT/bertl14/include -I$ROOT/bertl14/src -I$ROOT/bertl14/src/kernels"
DEFS=""
MAX_LEN=4200
TIMEOUT=5
case "$TARGET" in
    tokenizer) SRCS="$HERE/fuzz_bertl14.c $ROOT/bertl14/src/bertl14_tokenizer.c" ;;
    api)       SRCS="$HERE/fuzz_bertl14.c $LIB"; DEFS="-DFUZZ_WITH_LIBRARY" ;;
    model)     SRCS="$HERE/fuzz_model.c $LIB"; MAX_LEN=520 ;;       # 4 bytes + 64 edits of 8
    registry)  SRCS="$HERE/fuzz_registry.c $ROOT/bertl14/registry/bertl14_registry.c" ;;
    protocol)  SRCS="$HERE/fuzz_protocol.c"; MAX_LEN=1024; TIMEOUT=30 ;;  # firmware sources: tests/hostapp.py
    *) echo "run.sh: unknown target '$TARGET': use tokenizer, api, model, registry or protocol" >&2; exit 2 ;;
esac
case "${BERTL14_FUZZ_KERNELS:-portable}" in
    portable) ;;
    dsp) DEFS="$DEFS -DBERTL14_USE_DSP=1" ;;
    *) echo "run.sh: BERTL14_FUZZ_KERNELS must be portable or dsp, not '$BERTL14_FUZZ_KERNELS'" >&2; exit 2 ;;
esac
case "${BERTL14_FUZZ_WEIGHTS:-int16}" in
    int16) ;;
    int8)
        [ "$TARGET" = model ] || { echo "run.sh: BERTL14_FUZZ_WEIGHTS=int8 is for the model target only" >&2; exit 2; }
        DEFS="$DEFS -DBERTL14_WEIGHTS_INT8=1" ;;
    *) echo "run.sh: BERTL14_FUZZ_WEIGHTS must be int16 or int8, not '$BERTL14_FUZZ_WEIGHTS'" >&2; exit 2 ;;
esac
[ -f "${SRCS%% *}" ] || { echo "run.sh: ${SRCS%% *} not found: this checkout has no '$TARGET' target yet" >&2; exit 2; }
case "$SECONDS_TO_RUN" in ''|*[!0-9]*) echo "run.sh: SECONDS must be a whole number, not '$SECONDS_TO_RUN'" >&2; exit 2 ;; esac
mkdir -p "$OUT/corpus/$TARGET"
"$PY" "$HERE/gen_fuzz_data.py" "$OUT" >/dev/null
mkdir -p "$OUT/seeds/$TARGET"
if [ "$TARGET" = protocol ]; then
    "$PY" "$HERE/gen_protocol_seeds.py" "$OUT" >/dev/null
    "$PY" "$ROOT/tests/hostapp.py" "$OUT" "$SRCS" --cc "$CC_FUZZ" --name "fuzz_$TARGET" --libfuzzer >/dev/null
else
    # shellcheck disable=SC2086
    "$CC_FUZZ" -g -O1 -std=c99 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $DEFS $INC \
        -o "$OUT/fuzz_$TARGET" $SRCS "$OUT/fuzz_data.c" -lm
fi
cd "$OUT"
exec "./fuzz_$TARGET" -max_total_time="$SECONDS_TO_RUN" -max_len="$MAX_LEN" -timeout="$TIMEOUT" -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$OUT/crash-$TARGET-" "corpus/$TARGET" "seeds/$TARGET"
