# shellcheck shell=bash
# Sourced by bench scripts: quantiles of a Prometheus histogram scraped from a
# ripple daemon's /metrics.
#
# hist_quantiles NAME BEFORE AFTER: the p50 and p99 of the observations NAME
# gained between two scrapes (files; BEFORE may be /dev/null for all of them),
# linear within a bucket, printed as "P50 P99 COUNT" (seconds with three
# decimals). A quantile in the bucket above the last bound prints as ">BOUND";
# with no observations both print as "-".
hist_quantiles() {
  awk -v m="$1" -v first="$2" '
    index($1, m "_bucket{") == 1 {
      le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le)
      if (FILENAME == first) { base[le] = $2; next }
      n++; b[n] = le; c[n] = $2 - base[le] }
    $1 == m "_count" { if (FILENAME == first) base_count = $2; else total = $2 - base_count }
    END {
      if (total <= 0) { print "- - 0"; exit }
      split("0.5 0.99", qs, " ")
      for (qi = 1; qi <= 2; qi++) {
        want = qs[qi] * total; prev = 0; lo = 0
        for (i = 1; i <= n; i++) {
          if (c[i] >= want) {
            if (b[i] == "+Inf") { out[qi] = sprintf(">%g", lo); break }
            hi = b[i] + 0
            v = (c[i] == prev) ? hi : lo + (hi - lo) * (want - prev) / (c[i] - prev)
            out[qi] = sprintf("%.3f", v)
            break
          }
          prev = c[i]; lo = (b[i] == "+Inf") ? lo : b[i] + 0
        }
      }
      printf "%s %s %d\n", out[1], out[2], total
    }' "$2" "$3"
}
