/* SPDX-License-Identifier: UNLICENSED */
/* Capabilities: drop every capability, the bounding set and ambient set, and
 * lock the securebits so uid 0 (if ever reached) brings none back. */
#ifndef LEASEHOLD_CAPS_H
#define LEASEHOLD_CAPS_H
void drop_all_caps(void);
#endif
