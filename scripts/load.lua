-- wrk reporter for scripts/load.sh: one machine-readable line per run.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "LOAD requests=%d duration_us=%d errors=%d non2xx=%d p50_us=%.1f p99_us=%.1f p999_us=%.1f\n",
    summary.requests, summary.duration,
    e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9)))
end
