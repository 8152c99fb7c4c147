/* bertl14 UART application: bring up the board, then hand over to the execution model
 * (FreeRTOS task or bare-metal superloop), which prints the banner and answers lines. */
#include "platform.h"

void app_run(void); /* rtos_freertos.c or rtos_none.c */

ringbuf_t app_rx_ring;

int main(void)
{
    platform_init();
    app_run();
    return 0;
}
