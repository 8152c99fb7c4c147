/*
 * FreeRTOS execution model (seed 4.3): the UART RX interrupt queues bytes and gives rx_ready with
 * xSemaphoreGiveFromISR(); the inference task takes it and answers every complete line. A binary
 * semaphore is enough: the task drains the whole ring on each wake-up, and bytes that arrive while it
 * is busy stay in the ring.
 */
#include "FreeRTOS.h"
#include "semphr.h"
#include "task.h"

#include "console.h"
#include "platform.h"

static SemaphoreHandle_t rx_ready;

void app_rx_notify_from_isr(void)
{
    BaseType_t higher_priority_woken = pdFALSE;
    if (rx_ready != NULL) {
        xSemaphoreGiveFromISR(rx_ready, &higher_priority_woken);
        portYIELD_FROM_ISR(higher_priority_woken);
    }
}

static void inference_task(void *arg)
{
    (void)arg;
    console_banner("freertos");
    for (;;) {
        xSemaphoreTake(rx_ready, portMAX_DELAY);
        console_poll();
    }
}

void app_run(void)
{
    rx_ready = xSemaphoreCreateBinary();
    configASSERT(rx_ready != NULL);
    BaseType_t ok = xTaskCreate(inference_task, "infer", CONFIG_APP_TASK_STACK_SIZE / sizeof(StackType_t),
                                NULL, tskIDLE_PRIORITY + 2, NULL);
    configASSERT(ok == pdPASS);
    /* Bytes that arrived before the scheduler ran are picked up at the first wake-up. */
    xSemaphoreGive(rx_ready);
    vTaskStartScheduler();
    platform_fatal("scheduler returned", __LINE__);
}

void vApplicationStackOverflowHook(TaskHandle_t task, char *name)
{
    (void)task;
    platform_fatal(name, __LINE__);
}

void vApplicationMallocFailedHook(void)
{
    platform_fatal("FreeRTOS heap exhausted", __LINE__);
}
