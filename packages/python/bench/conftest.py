# The per-test cost benchmark (scripts/test-python runs it): each test's
# setup + call + teardown, summed from pytest's own reports, per variant
# (the test function's name); the median and quartiles after a warm-up
# are printed at the end, and written to $MOCKLIB_BENCH_OUT as JSON.
import json
import os
import statistics
from collections import defaultdict

_durations = defaultdict(float)
_phases = defaultdict(dict)
_variant_of = {}


def pytest_runtest_logreport(report):
    _durations[report.nodeid] += report.duration
    _phases[report.nodeid][report.when] = report.duration * 1000
    _variant_of[report.nodeid] = report.nodeid.split("::")[-1].split("[")[0]


def pytest_terminal_summary(terminalreporter):
    per_variant = defaultdict(list)
    for nodeid, seconds in _durations.items():
        per_variant[_variant_of[nodeid]].append(seconds * 1000)
    summary = {}
    for variant, times in sorted(per_variant.items()):
        measured = times[10:]  # the first ten rounds warm up (server start, first handshake)
        if len(measured) < 4:
            continue
        quartiles = statistics.quantiles(measured, n=4)
        nodeids = [nodeid for nodeid in _durations if _variant_of[nodeid] == variant][10:]
        phases = {
            when: statistics.median([_phases[nodeid].get(when, 0.0) for nodeid in nodeids])
            for when in ("setup", "call", "teardown")
        }
        summary[variant] = {"median_ms": statistics.median(measured), "q1_ms": quartiles[0],
                            "q3_ms": quartiles[2], "tests": len(measured),
                            "phases_ms": phases}
        terminalreporter.write_line(
            f"per-test cost {variant}: median {summary[variant]['median_ms']:.2f} ms "
            f"(quartiles {quartiles[0]:.2f}-{quartiles[2]:.2f} ms, {len(measured)} tests; median setup "
            f"{phases['setup']:.2f}, call {phases['call']:.2f}, teardown {phases['teardown']:.2f} ms)")
    out = os.environ.get("MOCKLIB_BENCH_OUT")
    if out:
        with open(out, "w") as file:
            json.dump(summary, file, indent=2)


def pytest_collection_modifyitems(items):
    # Round by round, each variant in turn, so that the machine's load
    # (other builds) weighs on every variant alike.
    order = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (item.callspec.params.get("round", 0), order[id(item)]))
