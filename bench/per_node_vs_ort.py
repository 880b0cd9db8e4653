#!/usr/bin/python3
"""Per-layer time of symbind against ONNX Runtime on the same net, weights and input.

    bench/per_node_vs_ort.py NET [--threads T] [--runs R] [--repeat N] [--all] [--batch B] [--symbind-args "ARGS"]

NET: resnet-18, resnet-50, squeezenet-1.1, mobilenet-v2, mobilefacenet (the nets bench/run.sh
writes into build/bench-work; SYMBIND_BENCH_BUILD names another build directory). Runs
`symbind run --profile` (R forwards after the run's warm-up) and `bench/ort_peer.js --profile`
(R forwards after 2 warm-ups, whose events are dropped), both on T threads, one after the
other, and prints one row per convolution: symbind node, weight shape, output shape, symbind
and ORT ms per forward (wall, mean over the runs) and the ratio ORT / symbind (below 1: ORT
is faster on that layer). The layers are matched by (weight shape, output shape) in the order
each engine runs them. ORT fuses more into its convolutions (BatchNorm, activations, the
residual add, NCHWc reorders around them are separate nodes), so the rest of each engine's
time is summed per op type below the table. For wall-clock numbers on a loaded machine run
the script under `chrt -f 50` (both engines inherit it) with --repeat N: N alternating rounds
of both, per node the least of its N means. --all: every convolution row sorted
by the gap (symbind - ORT ms), not only the 25 largest. --symbind-args: more options of
`symbind run`, e.g. "--no-fuse-blocks" to time MobileNet v2's inverted-residual blocks layer by
layer. --batch B (1 or 8, the ONNX files bench/run.sh writes): both engines on B images; at B > 1
symbind's input is random (the same weights, other values), which does not change the time.
"""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYMBOLS = {
    "resnet-18": "../shared/models/symbols/resnet-18-symbol.json",
    "squeezenet-1.1": "../shared/models/symbols/squeezenet_v1.1-symbol.json",
}


def symbind_profile(build, symbol, params, feed, threads, runs, extra):
    """{node: (op, output shape tuple, ms per run)} from `symbind run --profile`; feed: its input options."""
    out = subprocess.run([os.path.join(build, "tools", "symbind"), "run", symbol, params] + feed + ["--bench", str(runs), "--profile", "--threads", str(threads)] + extra,
                         check=True, capture_output=True, text=True).stdout
    rows, total = {}, None
    for line in out.splitlines():
        m = re.match(r"profile: \d+ runs, ([\d.]+) ms per run", line)
        if m:
            total = float(m.group(1))
        m = re.match(r"\d+\s+(\S+)\s+(\S+)\s+\(([\d,]+)\)\s+([\d.]+)\s", line)
        if m:
            rows[m.group(1)] = (m.group(2), tuple(int(d) for d in m.group(3).split(",")), float(m.group(4)))
    latency = re.search(r"latency_ms median=([\d.]+) min=([\d.]+)", out)
    return rows, total, latency.groups() if latency else ("-", "-")


def weight_shapes(build, symbol):
    out = subprocess.run([os.path.join(build, "tools", "symbind"), "shapes", symbol, "--shape", "data=1,3,224,224"],
                         check=True, capture_output=True, text=True).stdout
    shapes = {}
    for line in out.splitlines():
        m = re.match(r"arg (\S+) \(([\d,]+)\)", line)
        if m:
            shapes[m.group(1)] = tuple(int(d) for d in m.group(2).split(","))
    return shapes


def symbind_convolutions(symbol, shapes):
    """[(node name, weight shape)] of the symbol's convolutions in graph order."""
    graph = json.load(open(symbol))
    nodes = graph["nodes"]
    convs = []
    for node in nodes:
        if node["op"] != "Convolution":
            continue
        weight = nodes[node["inputs"][1][0]]["name"]
        convs.append((node["name"], shapes.get(weight)))
    return convs


def ort_profile(build, onnx, threads, runs, size, batch):
    """[(node name, op, weight shape or None, output shape, ms per run)] in ORT's execution order, and
    ORT's median forward time (ms, profiled)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, ORT_NODE_MODULES=os.path.join(build, "bench-work", "ort", "node_modules"))
        out = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_peer.js"), onnx, "--threads", str(threads),
                              "--runs", str(runs), "--batch", str(batch), "--size", "%d,%d" % (size, size), "--profile",
                              os.path.join(tmp, "ort")], check=True, capture_output=True, env=env, text=True).stdout
        events = json.load(open(glob.glob(os.path.join(tmp, "ort*.json"))[0]))
    nodes = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    per_run = len(nodes) // (runs + 2)
    durations = collections.OrderedDict()
    for i, e in enumerate(nodes):
        if i < 2 * per_run:  # the warm-ups
            continue
        args = e["args"]
        ins = [list(t.values())[0] for t in args.get("input_type_shape", [])]
        outs = [list(t.values())[0] for t in args.get("output_type_shape", [])]
        key = e["name"]
        if key not in durations:
            weight = tuple(ins[1]) if args.get("op_name") in ("Conv", "FusedConv") and len(ins) > 1 else None
            durations[key] = [args.get("op_name", "?"), weight, tuple(outs[0]) if outs else (), 0.0]
        durations[key][3] += e["dur"] / 1e3 / runs
    latency = re.search(r"latency_ms ([\d.]+)", out)
    return [(k, v[0], v[1], v[2], v[3]) for k, v in durations.items()], latency.group(1) if latency else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("net")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--symbind-args", default="")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1)
    a = ap.parse_args()
    build = os.path.abspath(os.environ.get("SYMBIND_BENCH_BUILD", os.path.join(ROOT, "build")))
    work = os.path.join(build, "bench-work")
    symbol = os.path.join(ROOT, SYMBOLS.get(a.net, "bench/models/%s-symbol.json" % a.net))
    size = 112 if a.net == "mobilefacenet" else 224
    feed = (["--input", "data=" + os.path.join(work, a.net, "input.npy")] if a.batch == 1 else
            ["--shape", "data=%d,3,%d,%d" % (a.batch, size, size)])
    shapes = weight_shapes(build, symbol)
    # --repeat R: R alternating rounds of both engines; per node the round with the least time
    # (a loaded machine disturbs single layers of single rounds by milliseconds).
    mine, theirs, mine_total, latency, ort_latency = {}, None, None, None, None
    for _ in range(a.repeat):
        m, m_total, m_latency = symbind_profile(build, symbol, os.path.join(work, a.net + ".params"), feed,
                                                a.threads, a.runs, a.symbind_args.split())
        t, t_latency = ort_profile(build, os.path.join(work, a.net, "b%d.onnx" % a.batch), a.threads, a.runs, size,
                                  a.batch)
        for name, row in m.items():
            if name not in mine or row[2] < mine[name][2]:
                mine[name] = row
        theirs = t if theirs is None else [old if old[4] <= new[4] else new for old, new in zip(theirs, t)]
        if mine_total is None or m_total < mine_total:
            mine_total, latency = m_total, m_latency
        if ort_latency is None or float(t_latency) < float(ort_latency):
            ort_latency = t_latency

    # Match each symbind convolution to the next unmatched ORT Conv of the same weight shape and
    # output plane. ORT's NCHWc convolutions pad filters and channels to its block of 16 (MobileNet
    # v2's 24-channel layers run as 32), so channel counts are compared rounded up to 16.
    def key(weight, out):
        block = lambda c: c if c < 8 else (c + 15) // 16 * 16
        return (block(weight[0]), block(weight[1])) + tuple(weight[2:]) + tuple(out[2:])
    pending = collections.defaultdict(collections.deque)
    for name, op, weight, out, ms in theirs:
        if weight is not None and len(weight) == 4:
            pending[key(weight, out)].append((name, ms))
    rows, matched = [], set()
    for name, weight in symbind_convolutions(symbol, shapes):
        if name not in mine:
            continue  # folded away or fused into another node
        op, out, ms = mine[name]
        queue = pending.get(key(weight, out))
        ort_name, ort_ms = queue.popleft() if queue else (None, None)
        if ort_name:
            matched.add(ort_name)
        rows.append((name, weight, out, ms, ort_ms))

    print("# %s, batch %d, %d threads, %d runs (profiled) x %d rounds; forward median: symbind %s ms (min %s), "
          "ORT %s ms; load average %s" % (a.net, a.batch, a.threads, a.runs, a.repeat, latency[0], latency[1], ort_latency,
                               " ".join(open("/proc/loadavg").read().split()[:3])))
    print("%-32s %-18s %-16s %9s %9s %8s" % ("symbind node", "weight", "output", "symbind", "ORT", "ORT/sb"))
    fmt = lambda t: "x".join(str(d) for d in t) if t else "-"
    shown = sorted(rows, key=lambda r: -(r[3] - (r[4] or 0)))
    for name, weight, out, ms, ort_ms in shown if a.all else shown[:25]:
        print("%-32s %-18s %-16s %9.3f %9s %8s" % (name, fmt(weight), fmt(out[1:]), ms,
                                                    "-" if ort_ms is None else "%.3f" % ort_ms,
                                                    "-" if not ort_ms else "%.2fx" % (ort_ms / ms)))
    conv_mine = sum(r[3] for r in rows)
    conv_theirs = sum(r[4] or 0 for r in rows)
    print("%-68s %9.3f %9.3f %7.2fx" % ("convolutions (%d, %d matched)" % (len(rows), len(matched)), conv_mine,
                                        conv_theirs, conv_theirs / conv_mine))
    other_mine = collections.Counter()
    for name, (op, out, ms) in mine.items():
        if not any(r[0] == name for r in rows):
            other_mine[op] += ms
    other_theirs = collections.Counter()
    for name, op, weight, out, ms in theirs:
        if name not in matched:
            other_theirs[op + (" (unmatched)" if op in ("Conv", "FusedConv") else "")] += ms
    print("other symbind: " + ", ".join("%s %.3f" % kv for kv in other_mine.most_common()))
    print("other ORT:     " + ", ".join("%s %.3f" % kv for kv in other_theirs.most_common()))
    mine_sum, ort_sum = sum(r[2] for r in mine.values()), sum(t[4] for t in theirs)
    print("summed over nodes: symbind %.3f ms, ORT %.3f ms (ORT / symbind %.2fx)" % (mine_sum, ort_sum, ort_sum / mine_sum))


if __name__ == "__main__":
    sys.exit(main())
