/*
 * HAL configuration of the bertl14 application on STM32H7 (written for this project, not the ST
 * template): only the modules the board layer uses, the NUCLEO's 8 MHz HSE (ST-LINK MCO, bypass).
 */
#ifndef STM32H7XX_HAL_CONF_H
#define STM32H7XX_HAL_CONF_H

#ifdef __cplusplus
extern "C" {
#endif

#define HAL_MODULE_ENABLED
#define HAL_CORTEX_MODULE_ENABLED
#define HAL_DMA_MODULE_ENABLED   /* the UART driver references the DMA API */
#define HAL_FLASH_MODULE_ENABLED
#define HAL_GPIO_MODULE_ENABLED
#define HAL_PWR_MODULE_ENABLED
#define HAL_RCC_MODULE_ENABLED
#define HAL_UART_MODULE_ENABLED

/* Oscillators (Hz) and start-up timeouts (ms). */
#define HSE_VALUE            8000000UL  /* NUCLEO-H743ZI: 8 MHz MCO of the ST-LINK */
#define HSE_STARTUP_TIMEOUT  100UL
#define CSI_VALUE            4000000UL
#define HSI_VALUE            64000000UL
#define LSE_VALUE            32768UL
#define LSE_STARTUP_TIMEOUT  5000UL
#define LSI_VALUE            32000UL
#define EXTERNAL_CLOCK_VALUE 12288000UL

#define VDD_VALUE            3300UL
#define TICK_INT_PRIORITY    0x0FUL   /* TIM6 timebase: lowest priority */
#define USE_RTOS             0
#define USE_SD_TRANSCEIVER   0U
#define USE_SPI_CRC          0U
#define USE_FLASH_ECC        0U
#define USE_HAL_UART_REGISTER_CALLBACKS 0U

#define assert_param(expr) ((void)0U)

#include "stm32h7xx_hal_rcc.h"
#include "stm32h7xx_hal_gpio.h"
#include "stm32h7xx_hal_dma.h"
#include "stm32h7xx_hal_cortex.h"
#include "stm32h7xx_hal_flash.h"
#include "stm32h7xx_hal_pwr.h"
#include "stm32h7xx_hal_uart.h"

#ifdef __cplusplus
}
#endif

#endif /* STM32H7XX_HAL_CONF_H */
