#!/bin/sh
# Long fuzzing run of the tokenizer and the public API with libFuzzer + ASan + UBSan.
#   tests/fuzz/run.sh [SECONDS=300] [tokenizer|api]
# Needs clang with libFuzzer (apt-get install clang). Work files in ${BERTL14_FUZZ_DIR:-build/fuzz}; the corpus
# grows there between runs; crash reproducers are written there too (replay: fuzz_bertl14 crash-<sha>).
set -eu
SECONDS_TO_RUN=${1:-300}
TARGET=${2:-api}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${BERTL14_FUZZ_DIR:-$ROOT/build/fuzz}
CC_FUZZ=${CC_FUZZ:-clang}
PY=${PYTHON:-python3}
mkdir -p "$OUT/corpus"
command -v "$CC_FUZZ" >/dev/null || { echo "run.sh: $CC_FUZZ not found: apt-get install clang (or set CC_FUZZ)"; exit 2; }
"$PY" "$ROOT/tests/fuzz/gen_fuzz_data.py" "$OUT" >/dev/null
SRCS="$ROOT/bertl14/src/bertl14_tokenizer.c"
DEFS=""
if [ "$TARGET" = api ]; then
    SRCS=$("$PY" -c "from bertl14_tools import cbuild; print(' '.join(map(str, cbuild.library_sources())))")
    DEFS="-DFUZZ_WITH_LIBRARY"
fi
# shellcheck disable=SC2086
"$CC_FUZZ" -g -O1 -std=c99 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $DEFS \
    -I"$ROOT/bertl14/include" -I"$ROOT/bertl14/src" -I"$ROOT/bertl14/src/kernels" \
    -o "$OUT/fuzz_bertl14" "$ROOT/tests/fuzz/fuzz_bertl14.c" $SRCS "$OUT/fuzz_data.c" -lm
cd "$OUT"
exec ./fuzz_bertl14 -max_total_time="$SECONDS_TO_RUN" -max_len=4200 -timeout=5 -rss_limit_mb=2048 \
    -print_final_stats=1 corpus seeds
