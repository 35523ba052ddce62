#!/usr/bin/env bash
# Cheap, checkable rules from docs/design/overview.md and docs/reliability.md.
# Each rule prints the offending lines and the script fails if any rule does.
#   scripts/lint.sh            all rules, clang-format in dry-run mode
#   scripts/lint.sh --tidy DIR also clang-tidy over recorder/ and plugin/ using
#                              DIR/compile_commands.json (warnings are errors)
#   scripts/lint.sh --tidy-only DIR   only the clang-tidy part
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
fail() { echo "lint: $1"; status=1; }
tidy() {  # tidy DIR: clang-tidy over the host side's translation units
  if ! find plugin recorder -name '*.cc' | sort | xargs -r clang-tidy -p "$1" --quiet 2>/dev/null; then
    fail "clang-tidy"
  fi
}
if [[ "${1:-}" == "--tidy-only" ]]; then
  tidy "${2:?build dir}"
  ((status == 0)) && echo "lint: clang-tidy ok"
  exit $status
fi

host_side=(plugin recorder)
code_files() { find "$@" -type f \( -name '*.h' -o -name '*.cc' \) 2>/dev/null | sort; }

# 1. Nothing in the host-side library may kill or unwind the host.
if out=$(code_files "${host_side[@]}" | xargs -r grep -nE \
    '(^|[^_[:alnum:]])(abort|exit|_Exit|quick_exit|assert)[[:space:]]*\(|std::terminate|(^|[^_[:alnum:]])throw([^_[:alnum:]]|$)' \
    | grep -vE '^[^:]+:[0-9]+:[[:space:]]*//' | grep -vE '//.*(abort|exit|assert|throw)' ); then
  [[ -n "$out" ]] && { echo "$out"; fail "abort/exit/assert/throw in plugin/ or recorder/"; }
fi

# 2. Every non-relaxed atomic names the operation it pairs with (within 3 lines).
for f in $(code_files "${host_side[@]}"); do
  awk -v file="$f" '
    { line[NR] = $0 }
    END {
      for (i = 1; i <= NR; i++) {
        if (line[i] ~ /memory_order_(release|acquire|acq_rel|seq_cst)|__ATOMIC_(RELEASE|ACQUIRE|ACQ_REL|SEQ_CST)/ &&
            line[i] !~ /^[[:space:]]*\/\//) {
          ok = 0
          for (j = i - 3; j <= i + 3; j++) if (j >= 1 && j <= NR && tolower(line[j]) ~ /pairs with|matched by/) ok = 1
          if (!ok) printf "%s:%d: non-relaxed atomic without a \"pairs with\" comment\n", file, i
        }
      }
    }' "$f"
done > /tmp/lint_atomics.$$
if [[ -s /tmp/lint_atomics.$$ ]]; then cat /tmp/lint_atomics.$$; fail "unpaired atomics"; fi
rm -f /tmp/lint_atomics.$$

# 3. Layering. Includes across libraries against the arrows are build errors
#    (cmake/FlightrecIncludeRoots.cmake); what a build cannot see is checked
#    here: public headers include only the C/C++ standard library and each
#    other, and the host side never includes third-party JSON/CLI code or
#    (outside recorder/) zstd, whose headers sit on the system include path.
if out=$(grep -nE '#include' include/flightrec/*.h | grep -vE '#include <[a-z_]+(\.h)?>|#include "flightrec/'); then
  [[ -n "$out" ]] && { echo "$out"; fail "include/ must include only standard headers and flightrec/"; }
fi
if out=$(code_files "${host_side[@]}" | xargs -r grep -nE '#include .(nlohmann|CLI/)'); then
  [[ -n "$out" ]] && { echo "$out"; fail "plugin/ and recorder/ must not include the CLI/JSON libraries"; }
fi
if out=$(code_files plugin | xargs -r grep -nE '#include <zstd'); then
  [[ -n "$out" ]] && { echo "$out"; fail "only recorder/ talks to zstd"; }
fi

# 4. The on-disk format header: fixed-width types only, no pointers.
if out=$(grep -nE '^\s+(size_t|long|bool|unsigned|int|char\s*\*|void\s*\*|[A-Za-z_:]+\s*\*)\s+[a-z_]+(\[[^]]*\])?;' \
    include/flightrec/record_format.h); then
  [[ -n "$out" ]] && { echo "$out"; fail "record_format.h fields must be fixed-width and pointer-free"; }
fi

# 5. Formatting (dry run).
if command -v clang-format >/dev/null; then
  if ! code_files include recorder plugin analyzer tests | xargs -r clang-format --dry-run --Werror 2>/tmp/lint_fmt.$$; then
    head -40 /tmp/lint_fmt.$$; fail "clang-format differences (run: clang-format -i on the files above)"
  fi
  rm -f /tmp/lint_fmt.$$
fi

# 6. clang-tidy on the host side, when asked (needs a compile database).
if [[ "${1:-}" == "--tidy" ]]; then
  tidy "${2:?build dir}"
fi

if ((status == 0)); then echo "lint: ok"; fi
exit $status
