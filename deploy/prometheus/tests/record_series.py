#!/usr/bin/env python3
"""Prints a promtool `input_series` block recorded from a running Prometheus.

The fail-slow rule tests (failslow-*_test.yml) are fed with series that a
real `flightrec exporter` served about a real emulated job, scraped by a real
Prometheus every second: this script reads them back (query_range, one
sample per second from START to END) and writes them in promtool's format,
one sample per `interval: 1s` step, `_` where a scrape is missing.

  record_series.py http://127.0.0.1:9090 JOB START END > series.yml

JOB is the training job's id (the `job` label); START and END are Unix
seconds. The metrics are the ones the fail-slow rules read.
"""
import json
import sys
import urllib.parse
import urllib.request

METRICS = [
    "flightrec_sync_collectives_total",
    "flightrec_sync_gpu_seconds_total",
    "flightrec_sync_queueing_seconds_total",
    "flightrec_process_info",
]
# Labels kept: the ones the rules match on, and global_rank.
KEEP = ["job", "host", "pid", "comm", "comm_id", "rank", "state", "global_rank"]


def query_range(base, expr, start, end):
    q = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": "1s"})
    with urllib.request.urlopen(base + "/api/v1/query_range?" + q, timeout=30) as r:
        return json.load(r)["data"]["result"]


def number(text):
    v = float(text)
    return "%d" % v if v == int(v) and abs(v) < 1e15 else "%.9g" % v


def main():
    base, job, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    steps = end - start + 1
    for metric in METRICS:
        result = query_range(base, '%s{job="%s"}' % (metric, job), start, end)
        result.sort(key=lambda r: sorted(r["metric"].items()))
        for r in result:
            labels = ",".join('%s="%s"' % (k, r["metric"][k]) for k in KEEP if k in r["metric"])
            values = ["_"] * steps
            for t, v in r["values"]:
                values[int(round(float(t))) - start] = number(v)
            print("      - series: '%s{%s}'" % (metric, labels))
            print("        values: '%s'" % " ".join(values))


if __name__ == "__main__":
    main()
