"""What V8 did during each timed call of a segments.mjs trace (TRACE=FILE): per call, the time
that garbage collection, JS optimising compiles (Maglev, TurboFan) and wasm compiles overlapped it
on the page's main thread, the Worker's thread and V8's background threads; then the fastest half
and the slowest quarter of the calls side by side (mean overlap, and how many calls had any).
Usage: python3 benches/pack_wasm/segments_trace.py FILE-0.json [FIRST_TIMED_ID] (default 101:
the calls after segments.mjs's 100 warm-up calls)."""
import collections
import json
import sys

GC = ("MinorGC", "MajorGC", "V8.GCScavenger", "V8.GCFinalizeMC", "V8.GCIncrementalMarking", "V8.GCCompactor")
JS_COMPILE = ("V8.MaglevTask", "V8.TurbofanTask", "V8.OptimizeBackground", "V8.OptimizeConcurrentPrepare",
              "V8.OptimizeConcurrentFinalize", "V8.MaglevConcurrentFinalize", "V8.CompileLazy")
WASM_COMPILE = ("wasm.CompileLazy", "wasm.BackgroundCompile", "wasm.ExecuteJSToWasmWrapperCompilationUnits",
                "wasm.TriggerTierUp", "wasm.CompileFunction", "wasm.ExecuteCompilationUnits")


def kind(name):
    if name in GC or name.startswith(("V8.GC_SCAVENGER_BACKGROUND", "V8.GC_MC_BACKGROUND")):
        return "gc"
    if name in JS_COMPILE:
        return "js-compile"
    if name in WASM_COMPILE:
        return "wasm-compile"
    return None


def main(path, first):
    data = json.load(open(path))
    events = data["traceEvents"] if isinstance(data, dict) else data
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    marks = {e["name"]: e["ts"] for e in events if "user_timing" in e.get("cat", "")}
    pid = next(e["pid"] for e in events if "user_timing" in e.get("cat", ""))

    def thread(tid):
        n = names.get((pid, tid), "")
        return "page" if n == "CrRendererMain" else "worker" if n.startswith("DedicatedWorker") else "background"

    spans, open_spans = [], collections.defaultdict(list)
    for e in sorted((e for e in events if e.get("pid") == pid), key=lambda e: e.get("ts", 0)):
        ph, k = e.get("ph"), kind(e["name"])
        if ph == "X" and k:
            spans.append((e["ts"], e["ts"] + e.get("dur", 0), thread(e["tid"]), k, e["name"]))
        elif ph == "B":
            open_spans[e["tid"]].append(e if k else None)
        elif ph == "E" and open_spans[e["tid"]]:
            b = open_spans[e["tid"]].pop()
            if b:
                spans.append((b["ts"], e["ts"], thread(e["tid"]), k, b["name"]))
    rows, i = [], first
    while f"c{i}:start" in marks:
        s, t = marks[f"c{i}:start"], marks[f"c{i}:end"]
        by_name = collections.defaultdict(float)
        for a, b, th, k, name in spans:
            if b >= s and a <= t:
                by_name[(th, k, name)] += min(b, t) - max(a, s)
        per = collections.defaultdict(float)
        for (th, k, _), v in by_name.items():  # nested events of one kind: the longest name's time
            per[(th, k)] = max(per[(th, k)], v)
        rows.append((t - s, i, per))
        i += 1
    rows.sort(key=lambda r: r[0])
    keys = sorted({k for r in rows for k in r[2]})
    print("call  total_us " + " ".join(f"{a}:{b}" for a, b in keys))
    for total, i, per in rows:
        print(f"{i:4d} {total:9.0f} " + " ".join(f"{per.get(k, 0):>{len(k[0]) + len(k[1]) + 1}.0f}" for k in keys))
    n = len(rows)
    for label, part in (("fastest half", rows[: n // 2]), ("slowest quarter", rows[-(n // 4):])):
        mean = {f"{a}:{b}": round(sum(r[2].get((a, b), 0) for r in part) / len(part)) for a, b in keys}
        have = {f"{a}:{b}": sum(1 for r in part if r[2].get((a, b), 0) > 0) for a, b in keys}
        print(f"{label}: {len(part)} calls, mean total {sum(r[0] for r in part) / len(part):.0f} us; "
              f"mean overlap us {mean}; calls with any {have}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 101)
