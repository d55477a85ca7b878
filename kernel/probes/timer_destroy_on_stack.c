// SPDX-License-Identifier: GPL-2.0
/* timer_destroy_on_stack(): destroy_timer_on_stack() under its newer name. */
#include <linux/timer.h>

void kverbs_probe(struct timer_list *timer);
void kverbs_probe(struct timer_list *timer)
{
	timer_destroy_on_stack(timer);
}
