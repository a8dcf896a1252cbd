"""bench/hyperfine_table.py - a markdown table of a hyperfine JSON export, for the bench scripts.

usage: python3 bench/hyperfine_table.py FILE.json [BASELINE]

One row per command: median, mean ± sd, min and max in ms, and for every command but BASELINE
(default "true") what it adds to BASELINE, as the difference of the medians."""
import json
import statistics
import sys


def table(path, baseline="true"):
    med = statistics.median
    res = {r["command"]: r for r in json.load(open(path))["results"]}
    base = med(res[baseline]["times"])
    print(f"| command | median | mean ± sd | min | max | added to `{baseline}` (difference of medians) |")
    print("|---|---|---|---|---|---|")
    for name, r in res.items():
        t = r["times"]
        added = f"**{(med(t) - base) * 1e3:.2f}**" if name != baseline else ""
        sd = statistics.stdev(t) if len(t) > 1 else 0.0
        print(f"| `{name}` | {med(t) * 1e3:.2f} | {statistics.mean(t) * 1e3:.2f} ± {sd * 1e3:.2f} "
              f"| {min(t) * 1e3:.2f} | {max(t) * 1e3:.2f} | {added} |")


if __name__ == "__main__":
    table(*sys.argv[1:3])
