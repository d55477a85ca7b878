/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ping's wire format: rping's message, and the hello two kverbs ends
 * add in their CM private data (ping.h has the protocol's sequence).
 * The one definition that the module and the test peers of selftests/
 * (ping_peer.c) both include; <linux/types.h>'s types only, so that
 * userspace builds it as it is.
 */
#ifndef _KVERBS_PING_PROTO_H
#define _KVERBS_PING_PROTO_H

#include <linux/types.h>

/* The message both sides exchange, as rping lays it out. */
struct kverbs_ping_info {
	__be64 addr;
	__be32 rkey;
	__be32 size;
};

#define KVERBS_PING_MAGIC	0x6b70	/* "kp" */
#define KVERBS_PING_VERSION	1

/* The client takes SENDs with invalidate; the server will send them. */
#define KVERBS_PING_HELLO_INV	(1U << 0)

/**
 * struct kverbs_ping_hello - what a kverbs ping end says in CM private data
 * @magic: KVERBS_PING_MAGIC
 * @version: KVERBS_PING_VERSION; an end reads the flags it knows of a
 *	hello of any version, and takes a bit it does not know as declined
 * @flags: KVERBS_PING_HELLO_*: the client's offer, the server's answer
 *
 * Little-endian, in the connection request and in the accept: 8 of the
 * 56 bytes a ULP has in an IB CM REQ.
 */
struct kverbs_ping_hello {
	__le16 magic;
	__le16 version;
	__le32 flags;
};

#endif /* _KVERBS_PING_PROTO_H */
