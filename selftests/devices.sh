#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kverbs devices: the module sees the guest's rxe device as ibv_devinfo
# does, with port 1 ACTIVE and the limits kernel verbs care about.
. "$(dirname "$0")/lib.sh"

test_devices_text() {
	local out
	out=$("$KVERBS" devices) || fail "kverbs devices exited $?" || return
	# rxe is an IB CA that speaks RoCE; siw an iWARP RNIC.
	local kind="CA, InfiniBand transport"
	[ "$KV_TYPE" = siw ] && kind="RNIC, iWARP transport"
	echo "$out" | grep -q "^$KV_DEV: $kind, node GUID [0-9a-f]\{16\}$" ||
		fail "no header line for $KV_DEV: $out" || return
	echo "$out" | grep -q "port 1: ACTIVE (LINK_UP), link layer Ethernet" ||
		fail "port 1 is not shown ACTIVE: $out" || return
	echo "$out" | grep -q "fast registration yes" || fail "no fast registration: $out"
}

test_devices_json() {
	"$KVERBS" devices --json > "$KV_TMP/d.json" || fail "exited $?" || return
	json_check "$KV_TMP/d.json" \
		"[x['name'] for x in d['devices']].count('$KV_DEV') == 1" \
		"all(x['max_qp'] > 0 and x['max_qp_wr'] > 0 and x['max_cqe'] > 0 for x in d['devices'])" \
		"[x for x in d['devices'] if x['name'] == '$KV_DEV'][0]['ports'][0]['state'] == 'ACTIVE'" \
		"[x for x in d['devices'] if x['name'] == '$KV_DEV'][0]['ports'][0]['link_layer'] == 'Ethernet'" \
		"[x for x in d['devices'] if x['name'] == '$KV_DEV'][0]['fast_reg'] is True" \
		"[x for x in d['devices'] if x['name'] == '$KV_DEV'][0]['max_fast_reg_page_list_len'] > 0"
}

# our_field NAME: the field of $KV_DEV in $KV_TMP/d.json, kverbs devices --json.
our_field() {
	kv_python "$KV_TMP/d.json" "$KV_DEV" "$1" <<'PY'
import json, sys
path, dev, field = sys.argv[1:]
print([x for x in json.load(open(path))["devices"] if x["name"] == dev][0][field])
PY
}

# What we report must be what rdma-core reports for the same device.
test_devices_match_ibv_devinfo() {
	local ours theirs
	command -v ibv_devinfo >/dev/null || skip "ibv_devinfo is not installed"
	"$KVERBS" devices --json > "$KV_TMP/d.json" || return 1
	theirs=$(ibv_devinfo -v -d "$KV_DEV") || skip "ibv_devinfo cannot open $KV_DEV"
	for field in max_qp max_qp_wr max_cqe max_qp_rd_atom; do
		ours=$(our_field "$field")
		echo "$theirs" | grep -Eq "^\s+$field:\s+$ours$" ||
			fail "$field: kverbs says $ours, ibv_devinfo says: $(echo "$theirs" | grep -E "^\s+$field:")" ||
			return
	done
	ours=$(our_field node_guid)
	theirs=$(ibv_devices | awk -v d="$KV_DEV" '$1 == d { print $2 }')
	[ "$ours" = "$theirs" ] || fail "node GUID: kverbs $ours, ibv_devices $theirs"
}

ktap_main test_devices_text test_devices_json test_devices_match_ibv_devinfo
