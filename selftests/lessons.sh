#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kverbs lesson: each classic verbs mistake fails the way the device is
# meant to fail it, with the exact post errno or completion status, and
# the right way succeeds on the same device.  Every lesson's right run is
# the control of its wrong one: a lesson whose right run fails proves
# nothing about its wrong run.
. "$(dirname "$0")/lib.sh"

# lesson NAME: run it on $KV_ADDR's device, its JSON in $KV_TMP/NAME.json.
lesson() {
	"$KVERBS" lesson --json "$1" "$KV_ADDR" > "$KV_TMP/$1.json" 2> "$KV_TMP/$1.err"
	rc=$?
	[ $rc = 0 ] || fail "lesson $1: exit $rc: $(cat "$KV_TMP/$1.err" "$KV_TMP/$1.json")"
}

iwarp() { [ "$KV_TYPE" = siw ]; }

test_list() {
	"$KVERBS" lesson > "$KV_TMP/list" || fail "kverbs lesson: exit $?" || return
	for l in unsignaled rnr fence access stale_key max_sge alignment mr_size; do
		grep -q "^$l " "$KV_TMP/list" || fail "no $l in: $(cat "$KV_TMP/list")" || return
	done
	"$KVERBS" lesson nosuch "$KV_ADDR" 2> "$KV_TMP/e"
	[ $? = 2 ] || fail "an unknown lesson should be a usage error" || return
	grep -q "no lesson 'nosuch'" "$KV_TMP/e" || fail "message: $(cat "$KV_TMP/e")"
}

# The post of the first WR past the queue fails with ENOMEM, never a
# completion; the right way posts 8 queues' worth without one failure.
# The wrong run fills the queue before all 128 are posted.  A software
# device may retire a WRITE or two while the poster runs, and free its
# slot, so the run may post a few past the queue's depth, never all:
# siw sends from the posting thread itself, and rxe's requester and
# completer run on another CPU as soon as the first WRITE is posted.
test_unsignaled() {
	local most='d["runs"][0]["queue_depth"] + 8'
	lesson unsignaled || return
	json_check "$KV_TMP/unsignaled.json" 'len(d["runs"]) == 2' \
		'd["runs"][0]["kind"] == "wrong"' \
		'd["runs"][0]["post_error"] == -12' 'd["runs"][0]["errno"] == "ENOMEM"' \
		'd["runs"][0]["posted"] >= 16' \
		"d['runs'][0]['posted'] <= $most" \
		'"wc_status" not in d["runs"][0]' \
		'd["runs"][1]["kind"] == "right"' 'd["runs"][1]["error"] == 0' \
		'd["runs"][1]["post_error"] == 0' 'd["runs"][1]["posted"] == 128' \
		'd["status"] == "ok"'
}

# The wrong run fills the send queue the device made, deeper than the
# 16 asked (rxe makes 31, siw 32), and tears it down full: each WRITE
# completes then, flushed, and so does the drain's marker and the
# receive side's.  Every CQ of the lesson (two runs, two ends) must hold
# the queue's depth and the receive queue's two; a CQ sized on the 16
# asked overflowed, the device dropped the rest of the flush, markers
# included, and the lesson hung for the drain's 5 s bound.
test_unsignaled_cq_holds_the_queue() {
	local cqes
	trace_need
	trace_start kverbs_cq_alloc || fail "cannot set up tracing" || return
	lesson unsignaled
	rc=$?
	trace_stop kverbs_cq_alloc
	[ $rc = 0 ] || return
	cqes=$(sed -n 's/.* kverbs_cq_alloc: .* cqe=\([0-9]*\) .*/\1/p' /sys/kernel/tracing/trace |
		paste -sd,)
	echo "# $(grep -o '"queue_depth":[0-9]*' "$KV_TMP/unsignaled.json" | head -1), CQs $cqes"
	json_check "$KV_TMP/unsignaled.json" "len([$cqes]) == 4" \
		"min([$cqes]) >= d['runs'][0]['queue_depth'] + 2"
}

# rnr_retry_count 0: IB_WC_RNR_RETRY_EXC_ERR (13) on the SEND; 7: the
# SEND waits for the late receive (200 ms at least) and the data arrives.
test_rnr() {
	if iwarp; then
		"$KVERBS" lesson rnr "$KV_ADDR" 2> "$KV_TMP/e"
		[ $? = 1 ] || fail "rnr on iWARP should be refused" || return
		grep -q "cannot show it (iWARP" "$KV_TMP/e" || fail "message: $(cat "$KV_TMP/e")" || return
		skip "iWARP has no RNR retry: refused as it should be"
	fi
	local before after
	before=$(rnr_counters)
	lesson rnr || return
	after=$(rnr_counters)
	json_check "$KV_TMP/rnr.json" 'len(d["runs"]) == 2' \
		'd["runs"][0]["errno"] == "EIO"' 'd["runs"][0]["wc_status"] == 13' \
		'd["runs"][0]["step"] == "send"' \
		'd["runs"][1]["error"] == 0' 'd["runs"][1]["elapsed_ns"] >= 200000000' \
		'd["runs"][1]["value"].to_bytes(8, "little") == b"kverbs l"' || return
	[ -n "$before" ] || return 0
	rnr_counted "$before" "$after" || return
	# The control: a lesson with no RNR in it fails the same check.
	before=$(rnr_counters)
	lesson max_sge || return
	after=$(rnr_counters)
	! rnr_counted "$before" "$after" > /dev/null ||
		fail "the device's count of the max_sge lesson passed as an RNR lesson's"
}

# The device's own count of the RNR lesson, where it keeps one (rxe's
# hw_counters; siw has none, and no RNR either): "send_rnr_err
# rcvd_rnr_err retry_rnr_exceeded_err", both ends on the one device.
rnr_counters() {
	local d=/sys/class/infiniband/$KV_DEV/ports/1/hw_counters c v out=
	[ -r "$d/send_rnr_err" ] || return 0
	for c in send_rnr_err rcvd_rnr_err retry_rnr_exceeded_err; do
		read -r v < "$d/$c" || return
		out+="$v "
	done
	echo "$out"
}

# What the lesson says, in the device's words: the wrong run's responder
# answers its SEND with an RNR NAK, and the requester with rnr_retry 0
# gives up at once (one retry exceeded); the right run's is answered
# with one or more while the receive is late, and retried.  Every RNR
# NAK sent is received: one device, no loss.
rnr_counted() {
	local -a b a
	read -r -a b <<<"$1"
	read -r -a a <<<"$2"
	local sent=$((a[0] - b[0])) rcvd=$((a[1] - b[1])) exceeded=$((a[2] - b[2]))
	echo "# the device: $sent RNR NAKs sent, $rcvd received, $exceeded retries exceeded"
	((exceeded == 1)) || fail "retries exceeded: $exceeded, expected 1 (the wrong run's)" || return
	((sent >= 2)) || fail "RNR NAKs sent: $sent, expected one per run at least" || return
	((rcvd == sent)) || fail "RNR NAKs received: $rcvd, sent: $sent"
}

# Unfenced, the SEND of the READ's sink carries the sink's old bytes on
# a device that gathers a SEND as it goes out (rxe, siw); fenced, the
# READ's data, every byte.  The hazard is a race the device nearly always
# loses: a requester stalled for the READ's whole round trip sends the new
# bytes unfenced, so the wrong run gets three tries to show it.  The right
# run must be right in every try.
test_fence() {
	local try stale='d["runs"][0]["errno"] == "EBADMSG" and d["runs"][0]["value"].to_bytes(8, "little") == b"OOOOOOOO"'

	for try in 1 2 3; do
		lesson fence || return
		json_check "$KV_TMP/fence.json" 'len(d["runs"]) == 2' \
			'd["runs"][0]["error"] == 0 or d["runs"][0]["errno"] == "EBADMSG"' \
			'd["runs"][1]["error"] == 0' \
			'd["runs"][1]["value"].to_bytes(8, "little") == b"NNNNNNNN"' || return
		json_check "$KV_TMP/fence.json" "$stale" > /dev/null && return
		echo "# try $try: the unfenced SEND carried the READ's new bytes"
	done
	fail "in 3 tries the unfenced SEND never carried the old bytes: $(cat "$KV_TMP/fence.json")"
}

# IB_WC_REM_ACCESS_ERR (10) for the WRITE and the atomic without their
# rights, the responder's QP in the error state; with them, the data and
# the atomic's old value (41) as meant.
# Over iWARP a WRITE's completion says only that TCP took the data: the
# writer may see its WRITE succeed, and the target, which finds the
# rights missing, fails the connection (EACCES on its side).
test_access() {
	local writer='d["runs"][0]["errno"] == "EIO" and d["runs"][0]["wc_status"] == 10 and d["runs"][0]["step"] == "rdma_write"'
	! iwarp || writer="d['runs'][0]['errno'] == '' or ($writer)"
	lesson access || return
	json_check "$KV_TMP/access.json" 'len(d["runs"]) == 3' "$writer" \
		'd["runs"][0]["peer_error"] != 0' \
		'd["runs"][2]["kind"] == "right"' 'd["runs"][2]["error"] == 0' || return
	if iwarp; then
		json_check "$KV_TMP/access.json" 'd["runs"][1]["errno"] == "EOPNOTSUPP"' \
			'd["runs"][2]["value"] == 0'
	else
		json_check "$KV_TMP/access.json" 'd["runs"][1]["errno"] == "EIO"' \
			'd["runs"][1]["wc_status"] == 10' 'd["runs"][1]["step"] == "atomic"' \
			'd["runs"][2]["value"] == 41'
	fi
}

# The WRITE with the invalidated key: IB_WC_REM_ACCESS_ERR (10), the
# responder's receive flushed; with the rotated key the bytes land.  The
# keys differ, and only in their low byte: the same MR under a new key.
# Over iWARP the writer may see its WRITE complete while the target
# refuses it: then the target's failure is the one asserted.
test_stale_key() {
	local writer='d["runs"][0]["errno"] == "EIO" and d["runs"][0]["wc_status"] == 10 and d["runs"][0]["step"] == "rdma_write"'
	! iwarp || writer="d['runs'][0]['errno'] == '' or ($writer)"
	lesson stale_key || return
	json_check "$KV_TMP/stale_key.json" 'len(d["runs"]) == 2' \
		'd["runs"][0]["kind"] == "wrong"' "$writer" \
		'd["runs"][0]["peer_error"] != 0' \
		'(d["runs"][0]["value"] & 0xffffffff) == 0' \
		'd["runs"][1]["kind"] == "right"' 'd["runs"][1]["error"] == 0' \
		'd["runs"][1]["posted"] == 1' 'd["runs"][1]["peer_error"] == 0' \
		'(d["runs"][1]["value"] >> 32) != (d["runs"][1]["value"] & 0xffffffff)' \
		'(d["runs"][1]["value"] >> 40) == (d["runs"][1]["value"] & 0xffffffff) >> 8' \
		'd["status"] == "ok"'
}

# Each wrong post refused with EINVAL, nothing posted, no completion; the
# limits as rxe and siw make them for one entry and no inline data asked:
# one entry, and 16 inline bytes on rxe (the entry's room), 80 on siw.
# The gathered SEND arrives piece by piece in the list's order.
test_max_sge() {
	local inline=16
	! iwarp || inline=80
	lesson max_sge || return
	json_check "$KV_TMP/max_sge.json" 'len(d["runs"]) == 3' \
		'd["runs"][0]["kind"] == "wrong"' 'd["runs"][0]["post_error"] == -22' \
		'd["runs"][0]["errno"] == "EINVAL"' 'd["runs"][0]["posted"] == 0' \
		'd["runs"][0]["step"] == "send"' '"wc_status" not in d["runs"][0]' \
		'd["runs"][0]["value"] == 1' \
		'd["runs"][1]["kind"] == "wrong"' 'd["runs"][1]["post_error"] == -22' \
		'd["runs"][1]["posted"] == 0' '"wc_status" not in d["runs"][1]' \
		"d['runs'][1]['value'] == $inline" \
		'd["runs"][2]["kind"] == "right"' 'd["runs"][2]["error"] == 0' \
		'd["runs"][2]["posted"] == 1' \
		'd["runs"][2]["value"].to_bytes(8, "little") == b"DDDDDDDD"' \
		'd["status"] == "ok"'
}

# rxe refuses the misaligned fetch-and-add at the post (EINVAL), nothing
# posted; aligned, the old value (41) comes back.  siw has no atomics:
# the lesson is refused.
test_alignment() {
	if iwarp; then
		"$KVERBS" lesson alignment "$KV_ADDR" 2> "$KV_TMP/e"
		[ $? = 1 ] || fail "alignment without atomics should be refused" || return
		grep -q "cannot show it (the device has no atomics)" "$KV_TMP/e" ||
			fail "message: $(cat "$KV_TMP/e")" || return
		skip "siw has no atomics: refused as it should be"
	fi
	lesson alignment || return
	json_check "$KV_TMP/alignment.json" 'len(d["runs"]) == 2' \
		'd["runs"][0]["kind"] == "wrong"' 'd["runs"][0]["post_error"] == -22' \
		'd["runs"][0]["errno"] == "EINVAL"' 'd["runs"][0]["posted"] == 0' \
		'd["runs"][0]["step"] == "atomic"' '"wc_status" not in d["runs"][0]' \
		'd["runs"][1]["kind"] == "right"' 'd["runs"][1]["error"] == 0' \
		'd["runs"][1]["value"] == 41' 'd["status"] == "ok"'
}

# One page past max_fast_reg_page_list_len does not map into one MR:
# rxe maps its 512 pages and stops short (EMSGSIZE), siw refuses the
# list of 257 (ENOMEM).  Split across two MRs (512 + 1 pages, 256 + 1 on
# siw), both WRITEs land, every byte.
test_mr_size() {
	local max=512 wrong='d["runs"][0]["errno"] == "EMSGSIZE" and d["runs"][0]["value"] == 512'

	if iwarp; then
		max=256
		wrong='d["runs"][0]["errno"] == "ENOMEM" and d["runs"][0]["value"] == 0'
	fi
	lesson mr_size || return
	json_check "$KV_TMP/mr_size.json" 'len(d["runs"]) == 2' \
		'd["runs"][0]["kind"] == "wrong"' "$wrong" \
		'd["runs"][0]["step"] == "reg_mr"' 'd["runs"][0]["posted"] == 0' \
		'd["runs"][1]["kind"] == "right"' 'd["runs"][1]["error"] == 0' \
		'd["runs"][1]["posted"] == 2' "d['runs'][1]['value'] == $max" \
		'd["status"] == "ok"'
}

# The uAPI's checks, each against a fair call that runs: flags and
# reserved fields must be 0, an unknown lesson is ENOENT, a wildcard or
# a port in the address EINVAL, a struct one byte short EINVAL.  The
# lessons leave no connection behind.
test_uapi_refusals() {
	kv_python "$KV_ADDR" <<'PY' || return
import errno, fcntl, os, socket, struct, sys
IOC = (ord("k") << 8) | 0x85
SIZE = 24 + 128 + 16 + 4 * 72

def call(lesson=1, flags=0, res0=0, res1=0, addr=sys.argv[1], port=0, size=SIZE):
    sa = struct.pack("<HH4s", socket.AF_INET, socket.htons(port),
                     socket.inet_aton(addr)).ljust(128, b"\0")
    buf = bytearray(struct.pack("<IIIIQ", size, flags, lesson, res0, 0) + sa +
                    struct.pack("<IIiI", res1, 0, 0, 0)).ljust(SIZE, b"\0")
    fd = os.open("/dev/kverbs", os.O_RDWR)
    try:
        fcntl.ioctl(fd, IOC, buf)
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)

checks = [("fair", {}, 0), ("flags", {"flags": 1}, errno.EINVAL),
          ("reserved0", {"res0": 1}, errno.EINVAL),
          ("reserved1", {"res1": 1}, errno.EINVAL),
          ("unknown lesson", {"lesson": 99}, errno.ENOENT),
          ("lesson 0", {"lesson": 0}, errno.ENOENT),
          ("wildcard", {"addr": "0.0.0.0"}, errno.EINVAL),
          ("port", {"port": 7174}, errno.EINVAL),
          ("short", {"size": SIZE - 1}, errno.EINVAL)]
for name, kw, want in checks:
    got = call(**kw)
    if got != want:
        print(f"{name}: errno {got}, expected {want}")
        sys.exit(1)
PY
	wait_for 5 kv_no_connections || fail "connections left: $(rdma res show cm_id)"
}

ktap_main test_list test_unsignaled test_unsignaled_cq_holds_the_queue test_rnr test_fence test_access \
	test_stale_key test_max_sge test_alignment test_mr_size test_uapi_refusals
