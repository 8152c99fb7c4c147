/*
 * FreeRTOS execution model: the UART RX interrupt queues bytes and gives rx_ready with
 * xSemaphoreGiveFromISR(); the inference task takes it and answers every complete line. A binary
 * semaphore is enough: the task drains the whole ring on each wake-up, and bytes that arrive while it
 * is busy stay in the ring.
 */
#include <string.h>

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

/* How long the task waits for input at most: with the watchdog, half its timeout, so it is fed while idle. */
#if defined(CONFIG_APP_WATCHDOG)
#define RX_WAIT pdMS_TO_TICKS(CONFIG_APP_WATCHDOG_TIMEOUT_MS / 2)
#else
#define RX_WAIT portMAX_DELAY
#endif

static void inference_task(void *arg)
{
    (void)arg;
    console_banner("freertos");
    for (;;) {
#if defined(CONFIG_APP_WATCHDOG)
        platform_watchdog_feed();
#endif
        if (xSemaphoreTake(rx_ready, RX_WAIT) == pdTRUE) {
            console_poll();
        }
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

/* FreeRTOS found a task's stack overflowed (configCHECK_FOR_STACK_OVERFLOW 2): `fatal: stack overflow <task>`. */
void vApplicationStackOverflowHook(TaskHandle_t task, char *name)
{
    static char what[sizeof "stack overflow " + configMAX_TASK_NAME_LEN];
    (void)task;
    strcpy(what, "stack overflow ");
    strncat(what, name != NULL ? name : "?", configMAX_TASK_NAME_LEN - 1);
    platform_fatal(what, 0);
}

void vApplicationMallocFailedHook(void)
{
    platform_fatal("FreeRTOS heap exhausted (raise CONFIG_APP_FREERTOS_HEAP_SIZE)", 0);
}
