/* SPDX-License-Identifier: UNLICENSED */
/* Landlock: which files the workload may read, write, execute; which TCP
 * ports it may bind/connect; signal and abstract-socket scoping. */
#ifndef LEASEHOLD_LANDLOCK_H
#define LEASEHOLD_LANDLOCK_H
#ifdef __cplusplus
extern "C" {
#endif
/* The highest Landlock ABI the running kernel offers; 0 when absent. */
int landlock_probe_abi(void);
#ifdef __cplusplus
}
#endif
#ifndef __cplusplus
#include "config.h"
/* Applies the ruleset to the calling process (after pivot_root; needs
 * no_new_privs). Fails closed. Returns the ABI used. */
int apply_landlock(const struct sandbox_config *cfg, const char *interpreter);
#endif
#endif
