#!/usr/bin/env bash
# The test command (README, CI): installs what is missing, then runs every
# stage and ends with one summary line "N passed, N failed".
#
#   scripts/test.sh            all stages (what CI runs)
#   scripts/test.sh --quick    lint + release build + unit/integration tests only
#
# Stages: lint, release (build + ctest), tidy (clang-tidy on the host side), package (find_package consumer),
# asan (ASan+UBSan build + ctest), tsan (TSan build + concurrency tests),
# fuzz (clang libFuzzer smoke run). Build dirs: build/, build-asan/, build-tsan/,
# build-fuzz/ (reused when present, so a second run is incremental).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
quick=0
[[ "${1:-}" == "--quick" ]] && quick=1
jobs=$(nproc 2>/dev/null || echo 2)

bash scripts/install-deps.sh --fuzz || { echo "flightrec: could not install dependencies"; exit 1; }

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

configure_build() {  # configure_build DIR [cmake args...]
  local dir=$1; shift
  cmake -S "$root" -B "$dir" -G Ninja -DFLIGHTREC_WERROR=ON "$@" >/dev/null &&
    cmake --build "$dir" -j "$jobs"
}

failed_tests=()
run_ctest() {  # run_ctest DIR [ctest args...]: failing test names are kept for the summary
  local dir=$1; shift
  local log="$dir/ctest-summary.log" rc=0
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 600 "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  if ((rc != 0)); then
    while IFS= read -r line; do failed_tests+=("$(basename "$dir"): $line"); done < <(
      sed -n '/The following tests FAILED:/,$p' "$log" | grep -E '^[[:space:]]+[0-9]+ - ' |
        sed -E 's/^[[:space:]]+//')
  fi
  return "$rc"
}

release() { configure_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo && run_ctest build; }

package() {
  rm -rf build/install build/package-test &&
    cmake --install build --prefix build/install >/dev/null &&
    cmake -S tests/package -B build/package-test -G Ninja \
      -DCMAKE_PREFIX_PATH="$root/build/install" >/dev/null &&
    cmake --build build/package-test && ctest --test-dir build/package-test --output-on-failure
}

asan() {
  configure_build build-asan -DCMAKE_BUILD_TYPE=Debug -DFLIGHTREC_SANITIZE=address &&
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      FLIGHTREC_SWEEP_CASES=1000 run_ctest build-asan -LE 'no_sanitizer|prometheus|browser'
}

tsan() {
  configure_build build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLIGHTREC_SANITIZE=thread &&
    TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 FLIGHTREC_SWEEP_CASES=1000 \
      run_ctest build-tsan -LE 'no_sanitizer|prometheus|browser'
}

fuzz() {
  CC=clang CXX=clang++ configure_build build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DFLIGHTREC_FUZZ=ON -DFLIGHTREC_BUILD_TESTS=ON &&
    bash scripts/fuzz.sh build-fuzz "${FLIGHTREC_FUZZ_SECONDS:-30}"
}

stage lint bash scripts/lint.sh
stage release release
stage tidy bash scripts/lint.sh --tidy-only build
if ((quick == 0)); then
  stage package package
  stage asan asan
  stage tsan tsan
  stage fuzz fuzz
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
