/* SPDX-License-Identifier: UNLICENSED */
/* The sandbox's PID 1: reaps orphans, forwards signals to the workload and
 * reports the workload's exit status. A workload running as PID 1 would
 * ignore default-action signals and leave zombies. */
#ifndef LEASEHOLD_INIT_H
#define LEASEHOLD_INIT_H
#include <signal.h>
#include <sys/types.h>
/* Records how much of the lease's /tmp is in use before the workload starts
 * (call right before forking it). */
void throwaway_mark(void);
/* Signals PID 1 forwards; block them before forking the workload. */
void init_forward_set(sigset_t *set);
/* Never returns: exits when the workload has ended (which tears down the pid
 * namespace and with it every process left in it). Before the exit report it
 * reports "K tmp_bytes N" and "K tmp_inodes N": what the workload left in the
 * throwaway /tmp (gone with the lease), so a result can say those writes were
 * discarded. */
_Noreturn void run_init(pid_t workload, const sigset_t *set);
#endif
