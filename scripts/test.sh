#!/usr/bin/env bash
# The test command (README, CI): installs what is missing, then runs every
# stage and ends with one summary line "N passed, N failed".
#
#   scripts/test.sh            all stages (what CI runs)
#   scripts/test.sh --quick    lint + release build + unit/integration tests only
#
# Stages: lint, release (build + ctest), tidy (clang-tidy on the host
# side), package (find_package consumer), asan (ASan+UBSan build + ctest)
# and tsan (TSan build + ctest), which run side by side, fuzz (clang
# libFuzzer smoke run), aarch64 (cross build, unit and emulator tests under
# qemu-user). Build dirs: build/, build-asan/, build-tsan/,
# build-fuzz/, build-aarch64/ (reused when present, so a second run is
# incremental).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1
jobs=$(nproc 2>/dev/null || echo 2)

deps=(--fuzz)
((quick == 0)) && deps+=(--aarch64)
bash scripts/install-deps.sh "${deps[@]}" || { echo "flightrec: could not install dependencies"; exit 1; }

passed=0
failed=0
failed_stages=()
stage() {  # stage NAME CMD...: runs one stage, records the result
  local name=$1; shift
  local t0=$SECONDS
  echo "=== stage $name ==="
  if "$@"; then
    passed=$((passed + 1)); echo "=== stage $name: ok ($((SECONDS - t0)) s) ==="
  else
    failed=$((failed + 1)); failed_stages+=("$name"); echo "=== stage $name: FAILED ($((SECONDS - t0)) s) ==="
  fi
}

# start_stage NAME CMD...: runs a stage in the background, its output in
# build-NAME/stage.log; finish_stage NAME waits for it, prints that log and
# records the result as `stage` does. The ASan and TSan stages run so, side
# by side: their tests mostly wait on emulated jobs, whose number the job
# slots bound across both (tests/integration/analyze_run.h, JobSlot).
declare -A bg_stage_pid=() bg_stage_t0=()
start_stage() {
  local name=$1; shift
  mkdir -p "build-$name"
  rm -f "build-$name/stage.failed-tests"
  echo "=== stage $name: started in the background (output below, when it ends) ==="
  (
    failed_tests=()
    "$@"
    rc=$?
    ((${#failed_tests[@]} == 0)) || printf '%s\n' "${failed_tests[@]}" >"build-$name/stage.failed-tests"
    exit "$rc"
  ) >"build-$name/stage.log" 2>&1 </dev/null &
  bg_stage_pid[$name]=$!
  bg_stage_t0[$name]=$SECONDS
}
finish_stage() {
  local name=$1 rc=0 line
  wait "${bg_stage_pid[$name]}" || rc=$?
  echo "=== stage $name (ran in the background) ==="
  cat "build-$name/stage.log"
  if [[ -f build-$name/stage.failed-tests ]]; then
    while IFS= read -r line; do failed_tests+=("$line"); done <"build-$name/stage.failed-tests"
  fi
  if ((rc == 0)); then
    passed=$((passed + 1)); echo "=== stage $name: ok ($((SECONDS - bg_stage_t0[$name])) s) ==="
  else
    failed=$((failed + 1)); failed_stages+=("$name")
    echo "=== stage $name: FAILED ($((SECONDS - bg_stage_t0[$name])) s) ==="
  fi
}

configure_build() {  # configure_build DIR [cmake args...]
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -G Ninja -DFLIGHTREC_WERROR=ON -DFLIGHTREC_DEBUG_INFO=lines "$@" >/dev/null &&
    cmake --build "$dir" -j "$jobs" "${keep_going[@]}"
}

failed_tests=()
run_ctest() {  # run_ctest DIR [ctest args...]: failing test names are kept for the summary
  local dir=$1; shift
  local log="$dir/ctest-summary.log" rc=0
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600 "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  # Where the stage's minutes go: its ten longest tests (ctest's own timings).
  if [[ -f $dir/Testing/Temporary/CTestCostData.txt ]]; then
    echo "slowest tests in $dir:"
    sed '/^---$/,$d' "$dir/Testing/Temporary/CTestCostData.txt" | sort -k3 -g -r | head -10 |
      awk '{printf "  %7.1f s  %s\n", $3, $1}'  # $3: ctest's running mean of the test's time
  fi
  if ((rc != 0)); then
    while IFS= read -r line; do failed_tests+=("$(basename "$dir"): $line"); done < <(
      sed -n '/The following tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' |
        sed -E 's/^[[:space:]]+//')
  fi
  return "$rc"
}

# The later stages' builds (asan, tsan, fuzz, aarch64) start in the background,
# at nice 19, once the release build is done: the release, asan and tsan
# tests mostly wait on emulated jobs, and the compiler takes the CPU they
# leave (at nice 19 it gets ~1.5 % of a core a test process wants). Each
# stage then waits for its own dir's background build and runs
# configure_build again (a no-op, or the rest of a build that failed, with
# its errors in the stage's log). Never two builds of one dir at once: the
# background chain builds the dirs in stage order and the stage touches its
# dir only after the chain has finished with it.
prebuild_pid=""
keep_going=()  # the background builds: (-- -k 0), so that one failed step leaves the rest built
build_asan() { configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DFLIGHTREC_SANITIZE=address; }
build_tsan() { configure_build build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLIGHTREC_SANITIZE=thread; }
build_fuzz() {
  CC=clang CXX=clang++ cmake -S "$root" -B build-fuzz -G Ninja -DFLIGHTREC_WERROR=ON \
      -DFLIGHTREC_DEBUG_INFO=lines -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLIGHTREC_FUZZ=ON -DFLIGHTREC_BUILD_TESTS=ON >/dev/null &&
    cmake --build build-fuzz -j "$jobs" --target flightrec_fuzzers "${keep_going[@]}"
}
start_prebuilds() {
  local d
  for d in build-asan build-tsan build-fuzz build-aarch64; do mkdir -p "$d" && rm -f "$d/prebuild.rc"; done
  (
    renice -n 19 -p "$BASHPID" >/dev/null
    keep_going=(-- -k 0)
    for d in asan tsan fuzz aarch64; do
      t0=$SECONDS
      "build_$d" >"build-$d/prebuild.log" 2>&1
      rc=$?
      echo "$rc $((SECONDS - t0))" >"build-$d/prebuild.rc"
    done
  ) </dev/null &
  prebuild_pid=$!
}
await_prebuild() {  # await_prebuild NAME: waits for build-NAME's background build, shows how it went
  local dir=build-$1
  [[ -n $prebuild_pid ]] || return 0
  while [[ ! -f $dir/prebuild.rc ]] && kill -0 "$prebuild_pid" 2>/dev/null; do sleep 2; done
  if [[ -f $dir/prebuild.rc ]]; then
    local rc secs
    read -r rc secs <"$dir/prebuild.rc"
    echo "background build of $dir (nice 19, from the end of the release build): rc $rc, $secs s"
    ((rc == 0)) || tail -n 40 "$dir/prebuild.log"
  fi
}

release() {
  configure_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo || return 1
  ((quick == 0)) && start_prebuilds
  run_ctest build
}

package() {
  rm -rf build/install build/package-test &&
    cmake --install build --prefix build/install >/dev/null &&
    cmake -S tests/package -B build/package-test -G Ninja \
      -DCMAKE_PREFIX_PATH="$root/build/install" >/dev/null &&
    cmake --build build/package-test && ctest --test-dir build/package-test --output-on-failure
}

asan() {
  await_prebuild asan
  build_asan &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      FLIGHTREC_SWEEP_CASES=1000 run_ctest build-asan -LE 'no_sanitizer|prometheus|browser'
}

tsan() {
  await_prebuild tsan
  build_tsan &&
    TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/tsan-suppressions.txt" \
      FLIGHTREC_SWEEP_CASES=1000 \
      run_ctest build-tsan -LE 'no_sanitizer|prometheus|browser'
}

# The harnesses only (target flightrec_fuzzers): the gcc stages build and
# run everything else, fuzz_replay included. They fuzz two at a time.
fuzz() {
  await_prebuild fuzz
  build_fuzz &&
    FLIGHTREC_FUZZ_JOBS="$jobs" bash scripts/fuzz.sh build-fuzz "${FLIGHTREC_FUZZ_SECONDS:-30}"
}

# aarch64 (Grace): Debian's cross compiler, the tests under qemu-user
# (docs/packaging.md "aarch64"). Builds the plugin, the recorder, the CLI,
# the unit tests and the emulator, and runs the tests those binaries hold:
# every label but those of the end-to-end suites (their binaries are not
# built, and gtest_discover_tests names each such binary <target>_NOT_BUILT).
# The kernel runs aarch64 programs through qemu (aarch64-binfmt.sh), so the
# emulator's rank processes and the CLI a test spawns run as on Grace. The
# same tests run twice: with 4 KiB pages, and with 64 KiB pages
# (QEMU_PAGESIZE, as Grace kernels often have) less one test that only
# qemu fails there: RecorderRestartsAfterLastClose maps the ring file over
# its parked range (MAP_FIXED), which qemu-user 7.2 refuses for a shared
# file mapping whose end is not on an emulated 64 KiB page (a kernel with
# 64 KiB pages maps it; docs/packaging.md "aarch64").
build_aarch64() {
  local dir=build-aarch64 launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache
                                            -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  bash scripts/aarch64-binfmt.sh &&
    cmake -S "$root" -B "$dir" -G Ninja -DFLIGHTREC_WERROR=ON -DFLIGHTREC_DEBUG_INFO=lines \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchain-aarch64-linux-gnu.cmake" "${launcher[@]}" \
      >/dev/null &&
    cmake --build "$dir" -j "$jobs" --target plugin/all recorder/all analyzer/all tests/support/all \
      tests/unit/recorder/all tests/unit/plugin/all tests/unit/reader/all \
      tests/unit/analyzer/all tests/unit/live/all tests/emulator/all "${keep_going[@]}"
}
aarch64() {
  local dir=build-aarch64 rc=0
  local skip_labels='^(integration|no_sanitizer|prometheus|browser|golden|layering|fuzz|steady_state)$'
  await_prebuild aarch64
  build_aarch64 || return 1
  run_ctest "$dir" -E '_NOT_BUILT$' -LE "$skip_labels" || rc=1
  echo "--- aarch64 with 64 KiB pages ---"
  QEMU_PAGESIZE=65536 run_ctest "$dir" -LE "$skip_labels" \
    -E '_NOT_BUILT$|^RingFile\.RecorderRestartsAfterLastClose$' || rc=1
  return "$rc"
}

stage lint bash scripts/lint.sh
stage release release
stage tidy bash scripts/lint.sh --tidy-only build
if ((quick == 0)); then
  stage package package
  start_stage asan asan
  stage tsan tsan
  finish_stage asan
  stage fuzz fuzz
  stage aarch64 aarch64
fi

# Files kept for review (docs/analyzer.md "HTML report"): the release
# stage's browser test writes the HTML report of a hang and its screenshot.
artifacts=${FLIGHTREC_ARTIFACTS_DIR:-$root/build/artifacts}
if compgen -G "$artifacts/*" >/dev/null; then
  echo
  echo "artifacts:"
  for a in "$artifacts"/*; do echo "  $a"; done
fi

echo
if ((failed > 0)); then
  echo "failed stages: ${failed_stages[*]}"
  for t in "${failed_tests[@]}"; do echo "failed test: $t"; done
fi
echo "stages: $passed passed, $failed failed"
((failed == 0))
