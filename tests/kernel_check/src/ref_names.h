/* Force-included into the second, portable compilation of bertl14/src/kernels (CMakeLists.txt): every function the
 * kernel files define gets the prefix ref_, so both kernel sets link into one image. */
#define bertl14_quantize_row_s16 ref_quantize_row_s16
#define bertl14_row_scale_s16 ref_row_scale_s16
#define bertl14_widen_s8 ref_widen_s8
#define bertl14_widen_block_s8 ref_widen_block_s8
#define bertl14_quantize_row_block_s16 ref_quantize_row_block_s16
#define bertl14_quantize_block_s16 ref_quantize_block_s16
#define bertl14_quantize_block_max_s16 ref_quantize_block_max_s16
#define bertl14_linear_s8_w16 ref_linear_s8_w16
#define bertl14_linear_s8_w8 ref_linear_s8_w8
#define bertl14_attn_scores_s8 ref_attn_scores_s8
#define bertl14_softmax_s32 ref_softmax_s32
#define bertl14_attn_context_s8 ref_attn_context_s8
#define bertl14_gelu_s16 ref_gelu_s16
#define bertl14_residual_s8 ref_residual_s8
#define bertl14_gelu_smooth_block_s16 ref_gelu_smooth_block_s16
#define bertl14_gelu_quantize_block_s16 ref_gelu_quantize_block_s16
#define bertl14_embedding_s8 ref_embedding_s8
#define bertl14_embedding_s4 ref_embedding_s4
#define bertl14_layernorm_s32 ref_layernorm_s32
#define bertl14_udiv_u64 ref_udiv_u64
