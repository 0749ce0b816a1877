#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Run the lab's tests. Brings the lab up if it is not (building the binaries if needed),
# runs every test, and brings the lab down again if this script started it.
# Tests that restart the lab (test-lifecycle, test-options, test-apiservers, test-node)
# run only when this script started the lab, or with --disruptive. test-node (the real
# node, and the chart installed on it) needs root.
# Usage: lab/tests/run-all.sh [--disruptive] [TEST...]   (TEST: e.g. test-deployment)
# Ends with the line "N passed, N failed"; exits non-zero if any test failed.
set -euo pipefail
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB="$TESTS_DIR/../lab"

disruptive=0 only=()
for a in "$@"; do
  case $a in
    --disruptive) disruptive=1 ;;
    -h | --help) sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) only+=("${a%.sh}") ;;
  esac
done

started=0
if ! "$LAB" status >/dev/null 2>&1; then
  echo "== lab is not up: lab/lab up"
  t0=$SECONDS
  "$LAB" up
  echo "== lab up took $((SECONDS - t0))s"
  started=1
  disruptive=1
fi
finish() {
  if ((started)); then echo "== lab/lab down (this script started the lab)"; "$LAB" down || true; fi
}
trap finish EXIT

# Order: non-disruptive first; the disruptive ones leave the lab up with default options.
all=(test-loopback test-deployment test-paper1 test-webhook test-lifecycle test-options test-apiservers test-node)
passed=0 failed=0 failures=()
for t in "${all[@]}"; do
  if ((${#only[@]})); then
    case " ${only[*]} " in *" $t "*) ;; *) continue ;; esac
  fi
  if [[ $t == test-lifecycle || $t == test-options || $t == test-apiservers || $t == test-node ]] && ((!disruptive)); then
    echo "== $t: skipped (restarts the lab; use --disruptive)"
    continue
  fi
  echo "== $t"
  t0=$SECONDS
  if bash "$TESTS_DIR/$t.sh"; then
    passed=$((passed + 1)); echo "== $t: passed ($((SECONDS - t0))s)"
  else
    failed=$((failed + 1)); failures+=("$t"); echo "== $t: FAILED ($((SECONDS - t0))s)"
  fi
done
((failed == 0)) || echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed"
((failed == 0))
