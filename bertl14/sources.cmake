# The core library's sources and their per-file options: the one list every build of the library reads
# (CMakeLists.txt here; the host builds, scripts/bertl14_tools/cbuild.py, parse it). Paths relative to bertl14/.
set(BERTL14_SOURCES
    src/bertl14_api.c
    src/bertl14_classify_allowed.c
    src/bertl14_encoder.c
    src/bertl14_luts.c
    src/bertl14_model.c
    src/bertl14_tokenizer.c
    src/kernels/bertl14_attn_context_s8.c
    src/kernels/bertl14_attn_scores_s8.c
    src/kernels/bertl14_embedding_s4.c
    src/kernels/bertl14_embedding_s8.c
    src/kernels/bertl14_gelu_s16.c
    src/kernels/bertl14_layernorm_s32.c
    src/kernels/bertl14_linear_s8_w16.c
    src/kernels/bertl14_linear_s8_w8.c
    src/kernels/bertl14_quantize_block_s16.c
    src/kernels/bertl14_quantize_row_s16.c
    src/kernels/bertl14_residual_s8.c
    src/kernels/bertl14_softmax_s32.c
    src/kernels/bertl14_udiv_u64.c
    src/kernels/bertl14_widen_s8.c
)

# Compiled for size (-Os, after the build's own -O flag): cold code (setup, model checks, the API, the tokenizer, the
# choice among allowed labels, the layer loop around the kernels) and the once-a-token embedding, so that the
# kernels' speed fits the core library's code budget (tests/lib/test_footprint.py).
set(BERTL14_SIZE_SOURCES
    src/bertl14_api.c
    src/bertl14_classify_allowed.c
    src/bertl14_encoder.c
    src/bertl14_model.c
    src/bertl14_tokenizer.c
    src/kernels/bertl14_embedding_s4.c
    src/kernels/bertl14_embedding_s8.c
)
set(BERTL14_SIZE_OPTIONS -Os)
