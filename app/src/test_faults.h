/* Faults on purpose, for the test image only (CONFIG_APP_TEST_FAULTS; test_faults.c). */
#ifndef APP_TEST_FAULTS_H
#define APP_TEST_FAULTS_H

#include <stdbool.h>

/** Fault the way `kind` says: "bus", "usage", "stack", "assert", "heap" (FreeRTOS), "hang". Returns false for an
 *  unknown kind, true if the board survived (it should not). */
bool test_fault(const char *kind);

#endif /* APP_TEST_FAULTS_H */
