/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf tests' wire format: what a kverbs perf client and server say
 * to each other.  The one definition that the module (perf.h, which has
 * the protocol's sequence) and the test peers of selftests/ (perf_hello.c)
 * both include, so that a peer cannot drift from the module it tests.
 * Everything is little-endian on the wire but the immediate data;
 * <linux/types.h>'s types only, so that userspace builds it as it is.
 */
#ifndef _KVERBS_PERF_PROTO_H
#define _KVERBS_PERF_PROTO_H

#include <linux/types.h>

#define KVERBS_PERF_MAGIC	0x6b76	/* "kv" */
/*
 * 2: control messages told by their length, not by immediate data
 * 3: the client sends the first message (START)
 * 4: the responder says in its ADV whether it grants SEND_BW's
 *    receives a window at a time (KVERBS_PERF_ADV_GRANTS), on every
 *    transport: a server's SRQ does, not iWARP alone
 */
#define KVERBS_PERF_VERSION	4

/**
 * struct kverbs_perf_hello - the client's request, in its CM private data
 * @magic: KVERBS_PERF_MAGIC
 * @version: KVERBS_PERF_VERSION
 * @test: &enum kverbs_perf_test
 * @flags: &enum kverbs_perf_flags
 * @msg_size: bytes per message
 * @tx_depth: work requests the client keeps outstanding
 * @iterations: messages, 0 in duration mode
 * @duration_ns: duration, 0 in iterations mode
 * @post_list: with KVERBS_PERF_F_REVERSE, the data work requests the
 *	server chains per post (&kverbs_perf.post_list); else 0
 * @cq_mod: with KVERBS_PERF_F_REVERSE, one of how many the server signals
 *	(&kverbs_perf.cq_mod); else 0
 * @inline_size: with KVERBS_PERF_F_REVERSE or in a ping-pong, the largest
 *	message the server posts inline (&kverbs_perf.inline_size); else 0
 * @reserved: zero; a server rejects a hello where it is not
 *
 * 56 bytes: all that an InfiniBand connection request carries for us.
 * A client sets @post_list, @cq_mod and @inline_size only where the
 * server posts data work requests too, so that a server that predates
 * them serves every other client as before.
 */
struct kverbs_perf_hello {
	__le16 magic;
	__le16 version;
	__le16 test;
	__le16 flags;
	__le32 msg_size;
	__le32 tx_depth;
	__le64 iterations;
	__le64 duration_ns;
	__le16 post_list;
	__le16 cq_mod;
	__le16 inline_size;
	__u8 reserved[18];
};

/**
 * struct kverbs_perf_reject_msg - why a server refused, in the reject
 * @magic: KVERBS_PERF_MAGIC
 * @version: the hello version the server speaks
 * @reason: &enum kverbs_perf_reject
 * @reserved0: zero
 * @value: what @reason refers to
 * @reserved1: zero
 */
struct kverbs_perf_reject_msg {
	__le16 magic;
	__le16 version;
	__le16 reason;
	__le16 reserved0;
	__le32 value;
	__le32 reserved1;
};

enum kverbs_perf_msg_type {
	KVERBS_PERF_MSG_ADV = 1,	/* the buffer, ready: server; WRITE_LAT client */
	KVERBS_PERF_MSG_ROUND,		/* client: a round is written / read */
	KVERBS_PERF_MSG_ROUND_OK,	/* server: checked / next round filled */
	KVERBS_PERF_MSG_PROGRESS,	/* client: still running */
	KVERBS_PERF_MSG_DONE,		/* client: the end, and its numbers */
	KVERBS_PERF_MSG_START,		/* client requester: connected, go ahead */
};

/*
 * A control message.  ADV: @addr, @rkey, @slots and @stride describe the
 * sender's buffer, @slots messages @stride bytes apart; @a holds
 * KVERBS_PERF_ADV_GRANTS when the responder grants its receives a window
 * of @slots at a time, each granted with a ROUND_OK.  ROUND: @a is the
 * round's first iteration, @b its length.  ROUND_OK: @a is the next
 * round's first iteration; for SEND_BW with grants, the messages taken
 * so far; with KVERBS_PERF_F_INV, @rkey the responder's fresh key.  DONE:
 * @a iterations, @b elapsed ns, @c peak bytes per second; with
 * KVERBS_PERF_F_RW, @addr the rdma_rw contexts that registered memory
 * (the requester posted one context per message).
 */
#define KVERBS_PERF_ADV_GRANTS	((__u64)1 << 0)

struct kverbs_perf_msg {
	__le32 type;
	__le32 rkey;
	__le64 addr;
	__le64 a;
	__le64 b;
	__le64 c;
	__le32 slots;
	__le32 stride;
};

/*
 * Word @w (from 0) of the message of iteration @iter, each word
 * little-endian at byte 8 * @w: a message's bytes, as --validate checks
 * them (kverbs_perf_fill(), kverbs_perf_check()); a message's last,
 * partial word is the low bytes of the next one.  Word 0 is the
 * iteration number times an odd constant, which is one to one, so the
 * message says which iteration it belongs to; the others differ from
 * word to word.
 */
static inline __u64 kverbs_perf_word(__u64 iter, __u32 w)
{
	return (iter + 1) * 0x9e3779b97f4a7c15ULL ^ (w * 0xbf58476d1ce4e5b9ULL);
}

#endif /* _KVERBS_PERF_PROTO_H */
