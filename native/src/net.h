/* SPDX-License-Identifier: UNLICENSED */
/* Network policy "none": an empty network namespace with only loopback. */
#ifndef LEASEHOLD_NET_H
#define LEASEHOLD_NET_H
/* Brings `lo` up inside the (new, empty) network namespace. */
void setup_loopback(void);
#endif
