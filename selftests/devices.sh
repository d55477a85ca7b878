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

# What the device is, shown as such: rxe (RoCE) has SRQ, UD, immediate
# data, both invalidations and atomics, and rdma_rw does not read with
# invalidate on it (ib_core does on iWARP only); siw (iWARP) the reverse
# for its port.
test_devices_caps_text() {
	local out want_port
	out=$("$KVERBS" devices) || fail "kverbs devices exited $?" || return
	echo "$out" | grep -Eq "^    SRQ yes \(max_srq [1-9][0-9]*, max_srq_wr [1-9][0-9]*, max_srq_sge [1-9][0-9]*\), masked atomics (none|HCA|global)$" ||
		fail "no SRQ with limits: $out" || return
	echo "$out" | grep -q "^    local invalidate yes, SEND with invalidate yes, inline data not known without a QP$" ||
		fail "no invalidation line: $out" || return
	want_port="        UD yes, immediate data yes, rdma_rw READ with invalidate no"
	[ "$KV_TYPE" = siw ] && want_port="        UD no, immediate data no, rdma_rw READ with invalidate yes"
	echo "$out" | grep -A1 "^    port 1: " | grep -qx "$want_port" ||
		fail "port 1 is not shown as '$want_port': $out" || return
	if [ "$KV_TYPE" = siw ]; then
		echo "$out" | grep -q ", atomics none$" || fail "siw shown with atomics: $out"
	else
		echo "$out" | grep -q ", atomics HCA$" || fail "rxe not shown with HCA atomics: $out"
	fi
}

# The JSON parses, and says what the text says, field for field.
test_devices_caps_json_matches_text() {
	"$KVERBS" devices --json > "$KV_TMP/d.json" || fail "--json exited $?" || return
	"$KVERBS" devices > "$KV_TMP/d.txt" || fail "text exited $?" || return
	kv_python "$KV_TMP/d.json" "$KV_TMP/d.txt" "$KV_DEV" <<'PY'
import json, sys
path, txt, want = sys.argv[1:]
d = json.load(open(path))
text = open(txt).read().splitlines()
yn = lambda v: "yes" if v else "no"
devs = [x for x in d["devices"] if x["name"] == want]
if len(devs) != 1:
    sys.exit(f"{want} is in the JSON {len(devs)} times")
for x in d["devices"]:
    for k in ("srq", "local_inv", "send_with_inv"):
        if not isinstance(x[k], bool):
            sys.exit(f"{x['name']}: {k} is {x[k]!r}, not a boolean")
    if x["max_inline_data"] is not None:
        sys.exit(f"{x['name']}: max_inline_data is {x['max_inline_data']!r}, not null")
    if x["srq"] != (x["max_srq"] > 0):
        sys.exit(f"{x['name']}: srq {x['srq']} with max_srq {x['max_srq']}")
    srq = "    SRQ " + yn(x["srq"])
    if x["srq"]:
        srq += f" (max_srq {x['max_srq']}, max_srq_wr {x['max_srq_wr']}, max_srq_sge {x['max_srq_sge']})"
    srq += ", masked atomics " + x["masked_atomic_cap"]
    lines = [srq,
             f"    local invalidate {yn(x['local_inv'])}, SEND with invalidate {yn(x['send_with_inv'])}, inline data not known without a QP"]
    for p in x["ports"]:
        lines.append(f"        UD {yn(p['ud'])}, immediate data {yn(p['immediate'])}, rdma_rw READ with invalidate {yn(p['read_with_inv'])}")
    start = text.index(next(t for t in text if t.startswith(x["name"] + ": ")))
    block = text[start:start + 6 + 2 * len(x["ports"])]
    if not block[3].endswith(", atomics " + x["atomic_cap"]):
        sys.exit(f"{x['name']}: atomics {x['atomic_cap']} not in {block[3]!r}")
    for line in lines:
        if line not in block:
            sys.exit(f"{x['name']}: the text lacks {line!r}:\n" + "\n".join(block))
PY
}

# ibv_devinfo -v prints an atomic capability as ATOMIC_HCA (1) and so on.
kv_ibv_atomic() {
	case $1 in
	none) echo "ATOMIC_NONE (0)" ;;
	HCA) echo "ATOMIC_HCA (1)" ;;
	global) echo "ATOMIC_GLOB (2)" ;;
	*) echo "unknown atomic_cap $1" ;;
	esac
}

# The SRQ limits and the atomic capability are rdma-core's numbers too.
test_devices_caps_match_ibv_devinfo() {
	local ours theirs field
	command -v ibv_devinfo >/dev/null || skip "ibv_devinfo is not installed"
	"$KVERBS" devices --json > "$KV_TMP/d.json" || return 1
	theirs=$(ibv_devinfo -v -d "$KV_DEV") || skip "ibv_devinfo cannot open $KV_DEV"
	for field in max_srq max_srq_wr max_srq_sge; do
		ours=$(our_field "$field")
		[[ $ours =~ ^[1-9][0-9]*$ ]] || fail "$field is $ours" || return
		echo "$theirs" | grep -Eq "^\s+$field:\s+$ours$" ||
			fail "$field: kverbs says $ours, ibv_devinfo says: $(echo "$theirs" | grep -E "^\s+$field:")" ||
			return
	done
	ours=$(kv_ibv_atomic "$(our_field atomic_cap)")
	echo "$theirs" | grep -Eq "^\s+atomic_cap:\s+${ours//[()]/.}$" ||
		fail "atomic_cap: kverbs says $ours, ibv_devinfo says: $(echo "$theirs" | grep -E "^\s+atomic_cap:")"
}

ktap_main test_devices_text test_devices_json test_devices_match_ibv_devinfo \
	test_devices_caps_text test_devices_caps_json_matches_text \
	test_devices_caps_match_ibv_devinfo
