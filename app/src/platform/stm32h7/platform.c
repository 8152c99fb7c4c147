/*
 * Platform layer of nucleo_h743zi (STM32H743ZI) on the ST HAL.
 *
 * Clock: 400 MHz SYSCLK from PLL1 (8 MHz HSE bypass from the ST-LINK MCO, /4, x200, /2) at voltage
 * scale 1. 480 MHz would need VOS0 (overdrive through SYSCFG, revision V silicon only); 400 MHz at
 * VOS1 runs on every revision (Y and V) and keeps the power sequence simple. AXI/AHB 200 MHz, APBx
 * 100 MHz, flash 2 wait states (RM0433 table for VOS1 at 200 MHz).
 * Console: USART3 on PD8 (TX) / PD9 (RX), AF7 -- the ST-LINK virtual COM port. Initialised by the
 * HAL, with the 16-byte receive FIFO on; reception is driven by our own interrupt handler (usart_rx.h:
 * FIFO half full, idle line, receive error), which moves every byte into the ring and reports overrun,
 * framing and noise errors to it (no per-byte re-arming of HAL_UART_Receive_IT, so nothing is lost
 * while the application is busy).
 * HAL timebase: TIM6 at 1 kHz (HAL_InitTick below), because FreeRTOS owns SysTick.
 */
#include <stdint.h>

#include "stm32h7xx_hal.h"

#include "fault.h"
#include "platform.h"
#include "usart_rx.h"

static UART_HandleTypeDef console_uart;

/* RX interrupt priority: less urgent than configMAX_SYSCALL_INTERRUPT_PRIORITY (5) so it may call
 * xSemaphoreGiveFromISR(). */
#define UART_RX_PRIORITY 6u

static void clock_config(void)
{
    RCC_OscInitTypeDef osc = {0};
    RCC_ClkInitTypeDef clk = {0};

    HAL_PWREx_ConfigSupply(PWR_LDO_SUPPLY);
    __HAL_PWR_VOLTAGESCALING_CONFIG(PWR_REGULATOR_VOLTAGE_SCALE1);
    while (!__HAL_PWR_GET_FLAG(PWR_FLAG_VOSRDY)) {
    }

    osc.OscillatorType = RCC_OSCILLATORTYPE_HSE;
    osc.HSEState = RCC_HSE_BYPASS;
    osc.PLL.PLLState = RCC_PLL_ON;
    osc.PLL.PLLSource = RCC_PLLSOURCE_HSE;
    osc.PLL.PLLM = 4;   /* 2 MHz reference */
    osc.PLL.PLLN = 400; /* 800 MHz VCO */
    osc.PLL.PLLP = 2;   /* 400 MHz SYSCLK */
    osc.PLL.PLLQ = 4;
    osc.PLL.PLLR = 2;
    osc.PLL.PLLRGE = RCC_PLL1VCIRANGE_1;
    osc.PLL.PLLVCOSEL = RCC_PLL1VCOWIDE;
    osc.PLL.PLLFRACN = 0;
    if (HAL_RCC_OscConfig(&osc) != HAL_OK) {
        platform_fatal("HAL_RCC_OscConfig", __LINE__);
    }

    clk.ClockType = RCC_CLOCKTYPE_HCLK | RCC_CLOCKTYPE_SYSCLK | RCC_CLOCKTYPE_PCLK1 | RCC_CLOCKTYPE_PCLK2 |
                    RCC_CLOCKTYPE_D3PCLK1 | RCC_CLOCKTYPE_D1PCLK1;
    clk.SYSCLKSource = RCC_SYSCLKSOURCE_PLLCLK;
    clk.SYSCLKDivider = RCC_SYSCLK_DIV1;
    clk.AHBCLKDivider = RCC_HCLK_DIV2;
    clk.APB3CLKDivider = RCC_APB3_DIV2;
    clk.APB1CLKDivider = RCC_APB1_DIV2;
    clk.APB2CLKDivider = RCC_APB2_DIV2;
    clk.APB4CLKDivider = RCC_APB4_DIV2;
    if (HAL_RCC_ClockConfig(&clk, FLASH_LATENCY_2) != HAL_OK) {
        platform_fatal("HAL_RCC_ClockConfig", __LINE__);
    }
}

static void console_uart_init(void)
{
    GPIO_InitTypeDef gpio = {0};
    __HAL_RCC_GPIOD_CLK_ENABLE();
    __HAL_RCC_USART3_CLK_ENABLE();
    gpio.Pin = GPIO_PIN_8 | GPIO_PIN_9;
    gpio.Mode = GPIO_MODE_AF_PP;
    gpio.Pull = GPIO_PULLUP;
    gpio.Speed = GPIO_SPEED_FREQ_LOW;
    gpio.Alternate = GPIO_AF7_USART3;
    HAL_GPIO_Init(GPIOD, &gpio);

    console_uart.Instance = USART3;
    console_uart.Init.BaudRate = CONFIG_APP_UART_BAUDRATE;
    console_uart.Init.WordLength = UART_WORDLENGTH_8B;
    console_uart.Init.StopBits = UART_STOPBITS_1;
    console_uart.Init.Parity = UART_PARITY_NONE;
    console_uart.Init.Mode = UART_MODE_TX_RX;
    console_uart.Init.HwFlowCtl = UART_HWCONTROL_NONE;
    console_uart.Init.OverSampling = UART_OVERSAMPLING_16;
    console_uart.Init.OneBitSampling = UART_ONE_BIT_SAMPLE_DISABLE;
    console_uart.Init.ClockPrescaler = UART_PRESCALER_DIV1;
    if (HAL_UART_Init(&console_uart) != HAL_OK) {
        platform_fatal("HAL_UART_Init", __LINE__);
    }
    /* receive FIFO: interrupt at half full (8 of USART_RX_FIFO_DEPTH bytes), on an idle line (the tail of a
     * burst) and on a receive error (overrun, framing, noise) */
    if (HAL_UARTEx_SetRxFifoThreshold(&console_uart, UART_RXFIFO_THRESHOLD_1_2) != HAL_OK ||
        HAL_UARTEx_EnableFifoMode(&console_uart) != HAL_OK) {
        platform_fatal("HAL_UARTEx_EnableFifoMode", __LINE__);
    }
    HAL_NVIC_SetPriority(USART3_IRQn, UART_RX_PRIORITY, 0);
    HAL_NVIC_EnableIRQ(USART3_IRQn);
    SET_BIT(USART3->CR3, USART_CR3_RXFTIE | USART_CR3_EIE);
    SET_BIT(USART3->CR1, USART_CR1_IDLEIE);
}

void USART3_IRQHandler(void)
{
    usart_rx_service(USART3, &app_rx_ring);
    app_rx_notify_from_isr();
}

const char platform_cycles_unit[] = "cpu_cycles";

uint32_t platform_cycles(void)
{
    return DWT->CYCCNT;
}

#if defined(CONFIG_APP_WATCHDOG)
/* IWDG1 (RM0433 "Independent watchdog"): clocked by the 32 kHz LSI, which starting it turns on. The prescaler is
 * the smallest (4 * 2^pr) that fits the timeout into the 12-bit reload. Frozen while a debugger halts the core. */
#define LSI_TICKS_PER_MS 32u
static void watchdog_start(uint32_t timeout_ms)
{
    uint32_t pr = 0, reload = 0;
    for (pr = 0; pr <= 6u; pr++) {
        reload = timeout_ms * LSI_TICKS_PER_MS / (4u << pr);
        if (reload <= 4096u) {
            break;
        }
    }
    DBGMCU->APB4FZ1 |= DBGMCU_APB4FZ1_DBG_IWDG1;
    IWDG1->KR = 0xCCCCu; /* start */
    IWDG1->KR = 0x5555u; /* unlock PR and RLR */
    IWDG1->PR = pr;
    IWDG1->RLR = reload - 1u;
    while (IWDG1->SR != 0u) { /* the values reach the LSI domain */
    }
    IWDG1->KR = 0xAAAAu;
}

void platform_watchdog_feed(void)
{
    IWDG1->KR = 0xAAAAu;
}
#endif

void platform_init(void)
{
    fault_init();
    CoreDebug->DEMCR |= CoreDebug_DEMCR_TRCENA_Msk;
    DWT->LAR = 0xC5ACCE55u; /* Cortex-M7: unlock the DWT before enabling the cycle counter */
    DWT->CYCCNT = 0;
    DWT->CTRL |= DWT_CTRL_CYCCNTENA_Msk;
    SCB_EnableICache();
    SCB_EnableDCache();
    HAL_Init(); /* NVIC priority grouping 4, HAL_InitTick(TIM6) */
    clock_config();
    console_uart_init();
#if defined(CONFIG_APP_WATCHDOG)
    watchdog_start(CONFIG_APP_WATCHDOG_TIMEOUT_MS);
#endif
}

void platform_console_write(const char *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        while (!(USART3->ISR & USART_ISR_TXE_TXFNF)) {
        }
        USART3->TDR = (uint8_t)data[i];
    }
    while (!(USART3->ISR & USART_ISR_TC)) {
    }
}

void platform_wait_for_interrupt(void)
{
    __DSB();
    __WFI();
}

void platform_irq_disable(void)
{
    __disable_irq();
}

void platform_irq_enable(void)
{
    __enable_irq();
}


bool platform_console_ready(void)
{
    return console_uart.gState != HAL_UART_STATE_RESET; /* HAL_UART_Init has run */
}

/* ---- HAL timebase on TIM6 (1 kHz), overriding the weak SysTick-based one of stm32h7xx_hal.c ---- */
HAL_StatusTypeDef HAL_InitTick(uint32_t TickPriority)
{
    if (TickPriority >= (1UL << __NVIC_PRIO_BITS)) {
        return HAL_ERROR;
    }
    __HAL_RCC_TIM6_CLK_ENABLE();
    /* TIM6 runs from the APB1 timer clock: PCLK1, doubled when APB1 is divided. */
    uint32_t pclk1 = HAL_RCC_GetPCLK1Freq();
    uint32_t timclk = ((RCC->D2CFGR & RCC_D2CFGR_D2PPRE1) == RCC_APB1_DIV1) ? pclk1 : 2u * pclk1;
    TIM6->CR1 = 0;
    TIM6->PSC = (timclk / 1000000u) - 1u; /* 1 MHz counter */
    TIM6->ARR = (1000000u / (1000u / (uint32_t)uwTickFreq)) - 1u;
    TIM6->EGR = TIM_EGR_UG;
    TIM6->SR = 0;
    TIM6->DIER = TIM_DIER_UIE;
    TIM6->CR1 = TIM_CR1_CEN;
    HAL_NVIC_SetPriority(TIM6_DAC_IRQn, TickPriority, 0);
    HAL_NVIC_EnableIRQ(TIM6_DAC_IRQn);
    uwTickPrio = TickPriority;
    return HAL_OK;
}

void HAL_SuspendTick(void)
{
    CLEAR_BIT(TIM6->DIER, TIM_DIER_UIE);
}

void HAL_ResumeTick(void)
{
    SET_BIT(TIM6->DIER, TIM_DIER_UIE);
}

void TIM6_DAC_IRQHandler(void)
{
    if (TIM6->SR & TIM_SR_UIF) {
        TIM6->SR = ~TIM_SR_UIF;
        HAL_IncTick();
    }
}
