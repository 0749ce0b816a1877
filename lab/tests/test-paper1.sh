#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Test 2: the paper-1 scenario (create a Deployment with 10 replicas, scale to 20, 30, 40,
# 50, waiting for all Pods Ready each time) completes; prints each step's time.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ns=$(new_namespace t-paper1)
check "paper-1 scenario completes in namespace $ns (per-step times below; not asserted)"
out=$("$LAB_ROOT/bench-paper1.sh" --namespace "$ns" --keep --timeout "$WAIT_TIMEOUT") ||
  fail "bench-paper1.sh failed: $out"
echo "$out"
[[ $(grep -c '^step ' <<<"$out") == 5 ]] || fail "expected 5 steps in the output"
check "the Deployment ends with 50 Running+Ready Pods on fake nodes"
wait_until "50 ready pods" has_n_ready_pods "$ns" app=paper1 50
pass "paper-1 scenario: 50 Pods Ready"
say "PASS"
