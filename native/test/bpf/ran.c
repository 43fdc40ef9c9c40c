/* SPDX-License-Identifier: UNLICENSED */
/* The dynamically linked exec target of driver.c: exits 77, so a parent can
 * tell "it ran" from an exec error, a signal or the loader's own failure
 * (127). Dynamic on purpose: its interpreter (ld.so) and libc are NOT on the
 * lease's exec allow-list, and it must still run, while `ld.so <copy>` is
 * denied. */
int main(void) { return 77; }
