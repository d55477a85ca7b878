/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The top of the module: /dev/kverbs and its ioctl table (chardev.c),
 * which main.c registers once the device list is up.
 */
#ifndef _KVERBS_CHARDEV_H
#define _KVERBS_CHARDEV_H

int kverbs_chardev_register(void);
void kverbs_chardev_unregister(void);

#endif /* _KVERBS_CHARDEV_H */
