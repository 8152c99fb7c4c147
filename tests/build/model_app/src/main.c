#include "bertl14.h"
#include "bertl14_config.h"
#include "platform.h"
#include "console.h"
extern const int16_t bertl14_weights[];
extern const uint32_t bertl14_vocab_offsets[];
static uint8_t work[BERTL14_WORK_BUFFER_SIZE] __attribute__((section(".dtcmram"), aligned(8)));
ringbuf_t app_rx_ring;
void app_rx_notify_from_isr(void) {}
int main(void) {
    platform_init();
    bertl14_config_t c = { .max_seq_len = BERTL14_MAX_SEQ_LEN, .vocab_size = BERTL14_VOCAB_SIZE,
        .work_buffer_ptr = (int8_t *)work, .work_buffer_size = sizeof(work),
        .weights_ptr = bertl14_weights, .vocab_offsets = bertl14_vocab_offsets,
        .weights_size = BERTL14_WEIGHTS_SIZE, .vocab_offsets_size = BERTL14_VOCAB_SECTION_SIZE };
    bertl14_status_t st = bertl14_init(&c);
    int32_t ids[BERTL14_MAX_SEQ_LEN]; uint32_t n = 0;
    if (st == BERTL14_OK) st = bertl14_tokenize("turn on the kitchen light", ids, &n, BERTL14_MAX_SEQ_LEN);
    bertl14_tensor_t out = {0};
    if (st == BERTL14_OK) st = bertl14_encode(ids, n, &out);
    console_puts(st == BERTL14_OK ? "model ok\r\n" : "model FAILED\r\n");
    for (;;) { platform_wait_for_interrupt(); }
}
