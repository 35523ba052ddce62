#!/usr/bin/env bash
# The main job, end to end, no GPU needed:
#   1. builds flightrec (plugin, CLI, NCCL emulator) if needed,
#   2. runs an emulated 16-rank job on 2 nodes (world + TP(4) + DP(4)
#      communicators, NCCL 2.31: profiler API v7, whose calls carry a user tag
#      that the emulator sets to the training step, as a framework would)
#      through the real plugin, where rank 5 gets stuck outside NCCL (a wedged
#      data loader) before its op 300,
#   3. lets the plugin's watchdogs seal dumps on every rank (timeout 3 s);
#      one rank spawns `flightrec watch` by itself, whose headline arrives in
#      the job's log (NCCL_DEBUG=WARN) with the verdict files beside the dumps
#      and a hook (NCCL_FLIGHTREC_ON_VERDICT) run once,
#   4. runs `flightrec analyze` on the dumps and prints the verdict, and writes
#      the Markdown, HTML and JSON reports and a Perfetto timeline beside them.
# Usage: scripts/demo.sh [OUT_DIR]      (default: build/demo)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=${1:-$root/build/demo}

bash scripts/install-deps.sh
if [[ ! -f build/build.ninja ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build build -j "$(nproc)" --target nccl-profiler-flightrec flightrec_cli flightrec_emu_bin >/dev/null

rm -rf "$out" && mkdir -p "$out/rings" "$out/dumps"
emu=$root/build/bin/flightrec-emu
flightrec=$root/build/bin/flightrec
[[ -x $emu ]] || emu=$(find build -name flightrec-emu -type f -executable | head -1)

echo "== 1. an emulated 16-rank job; rank 5 will hang outside NCCL before op 300"
export NCCL_PROFILER_PLUGIN=$root/build/lib/libnccl-profiler-flightrec.so
export NCCL_FLIGHTREC_DIR=$out/rings NCCL_FLIGHTREC_DUMP_DIR=$out/dumps
export NCCL_FLIGHTREC_TIMEOUT_S=3 NCCL_DEBUG=WARN
# The hook a user would wire to paging or requeueing; here it only says what it got.
export NCCL_FLIGHTREC_ON_VERDICT='echo "hook: verdict=$FLIGHTREC_VERDICT culprits=$FLIGHTREC_CULPRITS report=$FLIGHTREC_REPORT"'
set +e
"$emu" run --ranks 16 --tp 4 --ranks-per-node 8 --ops 600 --step-us 200 --nccl-version 2.31 \
  --fault stuck:rank=5:op=300 --mark-op 300 --job-dir "$out/job" --job-id demo \
  --until-log "flightrec: verdict:" --linger-s 2 --hang-timeout-s 60 \
  --summary "$out/emulator-summary.json" --log-file "$out/nccl.log" >/dev/null
rc=$?
set -e
unset NCCL_DEBUG NCCL_FLIGHTREC_ON_VERDICT
echo "   emulator exit status $rc (7 = stopped after the verdict appeared in the job's log)"
echo "   dumps sealed: $(find "$out/dumps" -name '*.frdump' | wc -l)  (in $out/dumps)"
echo
echo "== the verdict arrived by itself: the job's log ($out/nccl.log, NCCL WARN lines)"
grep -v 'op stuck past' "$out/nccl.log" | sed 's/^/   /'
latency=$(python3 - "$out/emulator-summary.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
marks = [r["mark_op_wall_ns"] for r in s["ranks"] if r["mark_op_wall_ns"]]
print("%.1f" % ((s.get("until_log_wall_ns", 0) - min(marks)) / 1e9) if marks else "?")
EOF
)
echo "   ($latency s from the stuck op's start to that line, with NCCL_FLIGHTREC_TIMEOUT_S=3)"
echo "   beside the dumps:"
(cd "$out/dumps" && ls flightrec-demo.verdict.* flightrec-demo.hook.log | sed 's/^/     /')
echo "   the hook's log:"
sed 's/^/     /' "$out/dumps/flightrec-demo.hook.log"

echo
echo "== 2. flightrec analyze $out/dumps/*.frdump $out/rings   (by hand, as before: the same answer)"
echo
set +e
"$flightrec" analyze "$out"/dumps/*.frdump "$out/rings"
verdict_rc=$?
"$flightrec" analyze "$out"/dumps/*.frdump "$out/rings" --format markdown -o "$out/report.md" >/dev/null
"$flightrec" analyze "$out"/dumps/*.frdump "$out/rings" --format html -o "$out/report.html" >/dev/null
"$flightrec" analyze "$out"/dumps/*.frdump "$out/rings" --format json -o "$out/report.json" >/dev/null
"$flightrec" timeline "$out"/dumps/*.frdump "$out/rings" -o "$out/trace.json" >/dev/null
set -e
echo
echo "== 3. reports (exit status $verdict_rc: 0 healthy, 1 findings)"
echo "   $out/report.md  $out/report.html  $out/report.json"
echo "   $out/trace.json   (open in https://ui.perfetto.dev)"
[[ $verdict_rc -eq 1 ]]
