#!/usr/bin/env bash
# Builds Release, runs every flightrec benchmark and prints a table.
#
#   scripts/bench.sh [OUT_DIR]        (default: build-bench/)
#
# Results (Google Benchmark JSON and analyzer.json) go to OUT_DIR. Knobs:
#   FLIGHTREC_BENCH_BUILD=DIR   reuse an existing Release build dir
#   FLIGHTREC_BENCH_SIZES="1024 4096 16384 65536"   analyzer job sizes (ranks)
#   FLIGHTREC_BENCH_REPS=5      repetitions of the hot-path benchmarks (min is reported)
#   FLIGHTREC_BENCH_ANALYZE_RUNS=3  analyze / decompress runs per size (best is reported)
#   FLIGHTREC_BENCH_PARTS="hotpath seal analyzer status exporter"    which parts to run
#   FLIGHTREC_BENCH_STATUS_RANKS=64   ranks of the live job `flightrec status` reads
#   FLIGHTREC_BENCH_STATUS_SIZES="64 1024"   ranks of the generated rings it reads too
#   FLIGHTREC_BENCH_KEEP=1      keep the generated jobs (several GB at 16k ranks)
# Never part of ctest: minutes of CPU and gigabytes of disk at the top size.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/build-bench}" && cd "${1:-$ROOT/build-bench}" && pwd)"
BUILD="${FLIGHTREC_BENCH_BUILD:-$OUT/build}"
SIZES="${FLIGHTREC_BENCH_SIZES:-1024 4096 16384 65536}"
REPS="${FLIGHTREC_BENCH_REPS:-5}"
ANALYZE_RUNS="${FLIGHTREC_BENCH_ANALYZE_RUNS:-3}"
PARTS="${FLIGHTREC_BENCH_PARTS:-hotpath seal analyzer status exporter}"
STATUS_RANKS="${FLIGHTREC_BENCH_STATUS_RANKS:-64}"
STATUS_SIZES="${FLIGHTREC_BENCH_STATUS_SIZES:-64 1024}"
JOBS="$OUT/jobs"

log() { printf '[bench] %s\n' "$*" >&2; }
has_part() { [[ " $PARTS " == *" $1 "* ]]; }

build() {
  if [[ ! -f "$BUILD/build.ninja" ]]; then
    cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  ninja -C "$BUILD" -j"$(nproc)" flightrec-bench-hotpath flightrec-bench-seal flightrec-genjob \
    flightrec-bench-exporter flightrec-bench-status flightrec_cli nccl-profiler-flightrec flightrec_emu_bin >/dev/null
}

machine() {
  python3 - "$OUT/machine.json" <<'EOF'
import json, os, subprocess, sys
lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
get = lambda k: next((l.split(":", 1)[1].strip() for l in lscpu.splitlines() if l.startswith(k)), "?")
json.dump({"model": get("Model name"), "cpus": os.cpu_count(), "hypervisor": get("Hypervisor vendor"),
           "load_avg_at_start": os.getloadavg()[0]}, open(sys.argv[1], "w"))
EOF
}

# Alternating rounds: each round is one process that runs every hot-path case
# once, the do-nothing plugin and flightrec side by side (noop first, then
# flightrec, per case), so that both see the same machine; the table takes the
# minimum and the median over the rounds.
run_hotpath() {
  log "hot path (plugin through the v5 ABI, $REPS alternating rounds against the do-nothing plugin)"
  local r files=()
  for ((r = 1; r <= REPS; r++)); do
    rm -rf "$OUT/rings"
    NCCL_FLIGHTREC_DIR="$OUT/rings" NCCL_FLIGHTREC_DUMP_ON_EXIT=0 \
      "$BUILD/bin/flightrec-bench-hotpath" --benchmark_repetitions=1 \
      --benchmark_min_time=0.2 --benchmark_format=json --benchmark_out_format=json \
      --benchmark_out="$OUT/hotpath-round$r.json" >/dev/null
    files+=("$OUT/hotpath-round$r.json")
  done
  rm -rf "$OUT/rings"
  python3 - "$OUT/hotpath.json" "${files[@]}" <<'EOF'
import json, sys
out, rounds = sys.argv[1], sys.argv[2:]
merged = json.load(open(rounds[0]))
merged["benchmarks"] = []
for i, f in enumerate(rounds):
    for b in json.load(open(f))["benchmarks"]:
        b["round"] = i + 1
        merged["benchmarks"].append(b)
json.dump(merged, open(out, "w"), indent=1)
EOF
  rm -f "${files[@]}"
}

run_seal() {
  log "dump seal of a 64k-record ring"
  "$BUILD/bin/flightrec-bench-seal" --benchmark_format=json --benchmark_out_format=json \
    --benchmark_out="$OUT/seal.json" >/dev/null
}

# One analyzer size: generate (through the recorder), analyze, decompress.
run_size() {
  local n=$1 dir="$JOBS/job-$1" gen="{}"
  local need_mb=$(( n * 100 / 1024 + 64 ))
  local avail_mb
  avail_mb=$(df -Pm "$OUT" | awk 'NR==2 {print $4}')
  if (( avail_mb < need_mb * 2 )); then
    log "skip $n ranks: ${avail_mb} MiB free, ~${need_mb} MiB needed"
    return
  fi
  if [[ ! -f "$dir/.complete" ]]; then
    rm -rf "$dir"
    log "generate $n ranks x 4096 records"
    gen=$("$BUILD/bin/flightrec-genjob" --out "$dir" --ranks "$n" --parallel "$(nproc)")
    touch "$dir/.complete"
  fi
  log "analyze $n ranks (best of $ANALYZE_RUNS, and of as many bare decompressions)"
  # Best of several runs: other load on a shared machine only ever adds time.
  # Both sides are timed the same way, as whole processes (start-up, the
  # directory walk and exit included) by one clock read just around the
  # child, alternating so that both see the same machine; genjob's own
  # in-process figure is kept in the row too. Peak memory comes from one
  # more analyze run under /usr/bin/time (whose own start-up is not timed).
  local rc=0 timing best dbest dec
  timing=$(python3 - "$ANALYZE_RUNS" "$OUT/analyze-$n.json" "$BUILD/bin/flightrec" \
    "$BUILD/bin/flightrec-genjob" "$dir" "$(nproc)" <<'EOF'
import json, subprocess, sys, time
runs, report, flightrec, genjob, d, threads = sys.argv[1:]
def wall(cmd):
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, p.stdout
a, z, inner = [], [], []
for _ in range(int(runs)):
    a.append(wall([flightrec, "analyze", "--format", "json", "-o", report, d])[0])
    s, out = wall([genjob, "--decompress", d, "--threads", threads])
    z.append(s)
    inner.append(json.loads(out))
print(min(a), min(z), json.dumps(min(inner, key=lambda r: r["seconds"])))
EOF
)
  read -r best dbest dec <<<"$timing"
  /usr/bin/time -v -o "$OUT/analyze-$n.time" "$BUILD/bin/flightrec" analyze \
    --format json -o "$OUT/analyze-$n.json" "$dir" || rc=$?
  local t0=0 t1=$best zt0 zt1
  zt0=$(date +%s.%N)
  find "$dir" -name '*.frdump' -print0 | xargs -0 zstd -tq
  zt1=$(date +%s.%N)
  python3 - "$OUT/analyzer.jsonl" "$n" "$rc" "$t0" "$t1" "$zt0" "$zt1" "$OUT/analyze-$n.time" \
    "$OUT/analyze-$n.json" "$dec" "$gen" "$dir" "$dbest" <<'EOF'
import json, os, re, sys
out, n, rc, t0, t1, zt0, zt1, timef, report, dec, gen, d, dproc = sys.argv[1:]
rss = max(int(m) for m in re.findall(r"Maximum resident set size \(kbytes\): (\d+)", open(timef).read()))
summary = ""
try:
    summary = json.load(open(report)).get("headline", "")
except Exception as e:  # the report format is the analyzer's; keep the run
    summary = "unreadable report: %s" % e
size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(d) for f in fs if f.endswith(".frdump"))
row = {"ranks": int(n), "exit_code": int(rc), "analyze_s": float(t1) - float(t0),
       "peak_rss_mib": rss / 1024.0, "decompress": json.loads(dec),
       "decompress_process_s": float(dproc),
       "zstd_t_1thread_s": float(zt1) - float(zt0), "dump_bytes": size,
       "generate": json.loads(gen), "summary": summary}
open(out, "a").write(json.dumps(row) + "\n")
EOF
  if [[ "${FLIGHTREC_BENCH_KEEP:-0}" != 1 ]]; then rm -rf "$dir"; fi
}

# The exporter: the scrape cost over 8 x 8 full rings, and the writers' cost
# per collective while an exporter scrapes their rings every second (the
# hot-path benchmark run twice, alternating, without and with an exporter
# writing a textfile at --interval 1 from the benchmark's ring directory).
run_exporter() {
  log "exporter scrape of 8 processes x 8 comms, full rings"
  "$BUILD/bin/flightrec-bench-exporter" --reps "$REPS" >"$OUT/exporter.jsonl"
  log "hot path while scraped every second"
  local filter='BM_Collective|BM_EightComms' pid
  for mode in quiet scraped quiet2 scraped2; do
    rm -rf "$OUT/rings" && mkdir -p "$OUT/rings"
    pid=""
    if [[ $mode == scraped* ]]; then
      "$BUILD/bin/flightrec" exporter "$OUT/rings" --textfile "$OUT/exporter.prom" --interval 1 &
      pid=$!
    fi
    NCCL_FLIGHTREC_DIR="$OUT/rings" NCCL_FLIGHTREC_DUMP_ON_EXIT=0 \
      "$BUILD/bin/flightrec-bench-hotpath" --benchmark_filter="$filter" \
      --benchmark_repetitions="$REPS" --benchmark_min_time=0.2 --benchmark_format=json \
      --benchmark_out_format=json --benchmark_out="$OUT/hotpath-$mode.json" >/dev/null
    if [[ -n $pid ]]; then kill "$pid"; wait "$pid" || true; fi
  done
  rm -rf "$OUT/rings"
}

run_analyzer() {
  rm -f "$OUT/analyzer.jsonl"
  mkdir -p "$JOBS"
  for n in $SIZES; do run_size "$n"; done
}

# `flightrec status --json` as a user runs it (whole process, 15 runs each;
# one row per case in status.jsonl): on the live rings of a running
# emulated job once every tp comm's ring wrapped, then on the same rings
# with the job's processes stopped (SIGSTOP: the rings stay live files, the
# cores are free), then on generated rings of STATUS_SIZES ranks
# (flightrec-bench-status: 3 comms per rank, tp lapped; read with
# --stalled-after 3600 so that they stay "progressing" while timed).
run_status() {
  log "status: $STATUS_RANKS live rings of a running emulated job"
  local rings="$OUT/status-rings" jobdir="$OUT/status-job"
  rm -rf "$rings" "$jobdir" "$OUT/status.jsonl" && mkdir -p "$rings"
  env NCCL_PROFILER_PLUGIN=flightrec LD_LIBRARY_PATH="$BUILD/lib" NCCL_FLIGHTREC_DIR="$rings" \
    NCCL_FLIGHTREC_TIMEOUT_S=600 "$BUILD/bin/flightrec-emu" run --ranks "$STATUS_RANKS" --tp 8 \
    --ranks-per-node 8 --ops 1000000000 --step-us 200 --hang-timeout-s 600 \
    --job-id bench-status --job-dir "$jobdir" --summary "$jobdir.summary.json" >/dev/null 2>&1 &
  local launcher=$! rc=0
  # The job is stopped below even when the timing fails.
  python3 - "$BUILD/bin/flightrec" "$rings" "$STATUS_RANKS" "$OUT/status.jsonl" <<'EOF' || rc=$?
import json, os, re, signal, subprocess, sys, time
flightrec, rings, ranks, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def status(*extra):
    t = time.perf_counter()
    p = subprocess.run([flightrec, "status", "--json", *extra, rings], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, p.stdout
def row(case, full):
    runs = sorted(status()[0] for _ in range(15))
    with open(out, "a") as f:
        f.write(json.dumps({"case": case, "ranks": ranks, "rings_full": full, "min_s": runs[0],
                            "median_s": runs[len(runs) // 2], "max_s": runs[-1],
                            "runs": len(runs)}) + "\n")
deadline = time.time() + 900
full = False
while time.time() < deadline:  # every process progressing and every tp comm's ring wrapped
    _, o = status()
    try:
        r = json.loads(o)
    except ValueError:
        time.sleep(1)
        continue
    procs = r.get("processes", [])
    if len(procs) == ranks and all(p["state"] == "progressing" for p in procs):
        full = all(c["last_completed"] and c["last_completed"]["op"]["index"] >= 4096
                   for p in procs for c in p["comms"] if c["name"].startswith("tp"))
        if full:
            break
    time.sleep(2)
row("emulated job, running", full)
# The ranks' pids are in their ring names (flightrec-<job>-<host>-<pid>.ring).
pids = [int(m.group(1)) for f in os.listdir(rings)
        for m in [re.search(r"-(\d+)\.ring$", f)] if m]
for pid in pids:
    os.kill(pid, signal.SIGSTOP)
try:
    time.sleep(1)
    row("emulated job, stopped", full)
finally:
    for pid in pids:
        os.kill(pid, signal.SIGCONT)
EOF
  kill -TERM "$launcher" 2>/dev/null || true
  wait "$launcher" 2>/dev/null || true
  rm -rf "$rings" "$jobdir" "$jobdir.summary.json"
  [[ $rc -eq 0 ]] || return "$rc"
  local n gen="$OUT/status-gen"
  for n in $STATUS_SIZES; do
    log "status: $n generated rings"
    rm -rf "$gen"
    "$BUILD/bin/flightrec-bench-status" --ranks "$n" --dir "$gen" --reps 5 >"$OUT/status-gen-$n.json"
    python3 - "$BUILD/bin/flightrec" "$gen" "$n" "$OUT/status.jsonl" "$OUT/status-gen-$n.json" <<'EOF'
import json, subprocess, sys, time
flightrec, rings, ranks, out, inproc = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
def once():
    t = time.perf_counter()
    subprocess.run([flightrec, "status", "--json", "--stalled-after", "3600", rings],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t
runs = sorted(once() for _ in range(15))
with open(out, "a") as f:
    f.write(json.dumps({"case": "generated rings", "ranks": ranks, "rings_full": True,
                        "min_s": runs[0], "median_s": runs[len(runs) // 2], "max_s": runs[-1],
                        "runs": len(runs), "in_process": json.load(open(inproc))}) + "\n")
EOF
    rm -rf "$gen"
  done
}

build
machine
has_part hotpath && run_hotpath
has_part seal && run_seal
has_part analyzer && run_analyzer
has_part status && run_status
has_part exporter && run_exporter

# The table: minimum over repetitions (other load only ever adds time).
python3 - "$OUT" <<'EOF'
import collections, json, os, sys
out = sys.argv[1]
def load(name):
    p = os.path.join(out, name)
    return json.load(open(p)) if os.path.exists(p) else None
m = load("machine.json") or {}
print("machine: %s, %s CPUs (%s), load %.1f at start" % (m.get("model"), m.get("cpus"),
      m.get("hypervisor"), m.get("load_avg_at_start", 0)))
hp = load("hotpath.json")
if hp:
    runs = collections.defaultdict(list)
    for b in hp["benchmarks"]:
        if b.get("run_type") == "iteration":
            runs[b["run_name"]].append(b)
    def vals(name, key):
        return sorted(r.get(key, 0) for r in runs.get(name, []))
    best = lambda name, key="cpu_time": (vals(name, key) or [float("nan")])[0]
    med = lambda name, key="cpu_time": (lambda v: v[len(v) // 2] if v else float("nan"))(vals(name, key))
    print("\nhot path: CPU ns per collective, %d alternating rounds (noop and flightrec in each);"
          " min (median)" % max(len(v) for v in runs.values()))
    print("%-44s %17s %17s %17s" % ("benchmark", "noop", "flightrec", "added"))
    def row(label, a, b, key="cpu_time"):
        print("%-44s %8.1f (%6.1f) %8.1f (%6.1f) %8.1f (%6.1f)" % (label, best(a, key), med(a, key),
              best(b, key), med(b, key), best(b, key) - best(a, key), med(b, key) - med(a, key)))
    for net in (0, 1):
        row("1 thread, 8 channels%s" % (", 2x4 net steps" if net else ""),
            "BM_Collective/plugin:0/net:%d" % net, "BM_Collective/plugin:1/net:%d" % net)
    for prior in (0, 1000000):
        row("flat: after %d collectives (net)" % prior,
            "BM_Flat/plugin:0/prior:%d/iterations:200000" % prior,
            "BM_Flat/plugin:1/prior:%d/iterations:200000" % prior)
    for net in (0, 1):
        for key in ("user_cpu_ns", "proxy_cpu_ns", "total_cpu_ns"):
            n = "BM_EightComms/plugin:%%d/net:%d/iterations:1/manual_time" % net
            row("8 threads (8 comms)%s: %s" % (", net" if net else "", key), n % 0, n % 1, key)
seal = load("seal.json")
if seal:
    print("\ndump seal of 16 comms x 4096 records")
    for b in seal["benchmarks"]:
        c = {k: v for k, v in b.items() if k.startswith(("writer_", "copy_", "zstd_", "dump_bytes"))}
        print("%-44s %8.1f ms  %s" % (b["name"].split("/iterations")[0], b["real_time"],
              " ".join("%s=%.4g" % kv for kv in sorted(c.items()))))
rows = os.path.join(out, "status.jsonl")
if os.path.exists(rows):
    print("\nstatus: flightrec status --json, whole process, 15 runs per row")
    print("%-24s %6s %10s %10s %10s  %s" % ("case", "rings", "min_ms", "median_ms", "max_ms", "note"))
    for line in open(rows):
        st = json.loads(line)
        note = "" if st["rings_full"] else "rings NOT yet full"
        if "in_process" in st:
            note = "in-process median %.1f ms" % st["in_process"]["in_process_median_ms"]
        print("%-24s %6d %10.1f %10.1f %10.1f  %s" % (st["case"], st["ranks"], st["min_s"] * 1e3,
              st["median_s"] * 1e3, st["max_s"] * 1e3, note))
rows = os.path.join(out, "exporter.jsonl")
if os.path.exists(rows):
    print("\nexporter: one scrape (scan + render) of 8 processes x 8 comms, full rings")
    print("(best and median of the reps; wall below CPU: the rings read on both cores)")
    print("%14s %11s %9s %9s %10s %10s %14s" % ("new/comm", "slots_read", "wall_ms", "cpu_ms",
          "wall_med", "cpu_med", "core%@15s"))
    for line in open(rows):
        r = json.loads(line)
        print("%14s %11d %9.3f %9.3f %10.3f %10.3f %14.4f" % (r["new_per_comm"], r["slots_read"],
              r["wall_ms"], r["cpu_ms"], r.get("wall_ms_median", 0), r.get("cpu_ms_median", 0),
              r["core_percent_at_15s"]))
def hp_best(name):
    p = os.path.join(out, name)
    if not os.path.exists(p):
        return {}
    best = {}
    for b in json.load(open(p))["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        for key in ("cpu_time", "total_cpu_ns"):
            if key in b:
                k = (b["run_name"], key)
                best[k] = min(best.get(k, float("inf")), b[key])
    return best
q = [hp_best("hotpath-quiet.json"), hp_best("hotpath-quiet2.json")]
s = [hp_best("hotpath-scraped.json"), hp_best("hotpath-scraped2.json")]
if q[0] and s[0]:
    print("\nwriters while scraped every second: CPU ns per collective (min over runs)")
    print("%-60s %9s %9s" % ("benchmark", "quiet", "scraped"))
    for k in sorted(q[0]):
        if "plugin:1" not in k[0]:
            continue
        qa = min(x.get(k, float("inf")) for x in q)
        sa = min(x.get(k, float("inf")) for x in s)
        print("%-60s %9.1f %9.1f" % ((k[0].split("/iterations")[0] + " " + k[1])[:60], qa, sa))
rows = os.path.join(out, "analyzer.jsonl")
if os.path.exists(rows):
    print("\nanalyzer: flightrec analyze over N ranks x 4096 records (one hung rank)")
    print("(ratio: analyze / decompress, both whole processes; decomp_in: genjob's in-process time)")
    print("%7s %9s %9s %9s %9s %9s %10s %10s  %s" % ("ranks", "analyze_s", "decomp_s", "ratio",
          "decomp_in", "zstd-t_s", "rss_MiB", "dumps_MiB", "headline"))
    for line in open(rows):
        r = json.loads(line)
        d = r["decompress_process_s"]
        print("%7d %9.3f %9.3f %9.2f %9.3f %9.2f %10.1f %10.1f  %s" % (r["ranks"], r["analyze_s"], d,
              r["analyze_s"] / d if d else 0, r["decompress"]["seconds"], r["zstd_t_1thread_s"],
              r["peak_rss_mib"], r["dump_bytes"] / 2**20, r["summary"][:60]))
EOF
