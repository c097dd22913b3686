#!/usr/bin/python3
"""Kiln CPU benchmark: Kiln's CPU backend (through kilnexec) against ONNX Runtime's CPU provider (npm
onnxruntime-node) on the same ONNX models with the same thread count, side by side in one run. Prints a markdown
table last and writes it to --out (the raw numbers as JSON beside it). See benchmarks/cpu/README.md.

Every row (model x batch) is independent: an export, Kiln or ORT error is recorded in its Notes cell and the run
goes on. Each subprocess call has a timeout (--kiln-timeout, --ort-timeout) that never exceeds the budget left.
--dry-run prints the plan and the commands without running anything.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import export as exporter  # noqa: E402  (MODELS and the encoder's shape; torch is imported only to export)

LABELS = {
    "resnet18": "ResNet-18",
    "resnet50": "ResNet-50",
    "mobilenet_v2": "MobileNetV2",
    "efficientnet_b0": "EfficientNet-B0",
    "vit": "ViT-B/16",
    "bert_enc": f"BERT-base-shaped encoder s{exporter.ENC_SEQ} ({exporter.ENC_LAYERS} layers)",
}
BATCHES = [1, 8]
ROWS = [(f"{m}_b{b}", m, b) for m in exporter.MODELS for b in BATCHES]

# Rows whose Kiln inference took seconds with the reference kernels: they get --slow-iterations so that a row
# stays well inside --kiln-timeout. Every row gets the same warm-up time (the peer gets its warm-up runs too:
# without one, Kiln's median included oneDNN's first-run primitive creation on the rows with few iterations). A batch-8 row whose batch-1 row was measured in
# the same run gets its iterations from that time instead (and is skipped when even one does not fit).
SLOW_ROWS = {"resnet18_b1", "resnet18_b8", "resnet50_b1", "resnet50_b8", "mobilenet_v2_b8", "efficientnet_b0_b8",
             "vit_b1", "vit_b8", "bert_enc_b1", "bert_enc_b8"}

T0 = time.monotonic()


def log(msg):
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def first_line(text, limit=160):
    """The most informative line of an error output (kilnexec's "[E] ..." if any), fit for a table cell."""
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    pick = next((l for l in lines if l.startswith("[E]")), None)
    if pick is None:
        pick = next((l for l in reversed(lines) if "rror" in l), lines[-1] if lines else "error")
    pick = pick.replace("|", "/")
    return pick if len(pick) <= limit else pick[:limit - 3] + "..."


def select_rows(spec):
    """--rows: a full row id selects that row; any other word selects the rows whose id contains it."""
    if not spec:
        return list(ROWS)
    words = [w for w in spec.split(",") if w]
    ids = {r[0] for r in ROWS}
    out = []
    for row in ROWS:
        for w in words:
            if (w in ids and w == row[0]) or (w not in ids and w in row[0]):
                out.append(row)
                break
    return out


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def kiln_commit():
    if os.environ.get("KILN_COMMIT"):
        return os.environ["KILN_COMMIT"]
    try:
        out = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        commit = out.stdout.strip() or "unknown"
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return commit + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


class Budget:
    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()


def run_call(cmd, timeout, log_path):
    """Runs cmd with a timeout; returns (ok, stdout, error text). Its output is kept in log_path."""
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        with open(log_path, "w") as f:
            f.write(shlex.join(cmd) + f"\n# timed out after {timeout:.0f} s\n" + out)
        return False, "", f"timed out after {timeout:.0f} s"
    except OSError as e:
        return False, "", f"{cmd[0]}: {e}"
    with open(log_path, "w") as f:
        f.write(shlex.join(cmd) + f"\n# rc={p.returncode}, {time.monotonic() - start:.1f} s\n" + p.stdout + p.stderr)
    if p.returncode != 0:
        return False, p.stdout, first_line(p.stderr + "\n" + p.stdout)
    return True, p.stdout, ""


def kiln_cmd(a, model_path, shape, iters, warmup_ms, times_path, bf16=False):
    return [a.kilnexec, f"--onnx={model_path}", "--backend=cpu", f"--threads={a.threads}", f"--shapes={shape}",
            f"--warmUp={warmup_ms}", f"--iterations={iters}", "--duration=0", f"--exportTimes={times_path}"] + \
        (["--bf16"] if bf16 else [])


def ort_cmd(a, model_path, shape, warmup, iters):
    return [a.node, os.path.join(HERE, "ort_bench.js"), f"--model={model_path}", f"--shape={shape}",
            f"--threads={a.threads}", f"--warmup={warmup}", f"--iters={iters}", f"--modules={a.ort_modules}"]


def fmt_ms(v):
    if v is None:
        return "—"
    if v >= 100:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def render(a, meta, results):
    """The report: a header (date, CPU, threads, versions, method) and the table."""
    lines = [
        f"### CPU benchmark, {meta['date']}",
        "",
        f"CPU {meta['cpu']} ({meta['nproc']} cores visible, load average {meta['loadavg']:.2f} at the start), {a.threads} threads for both (Kiln --threads; ORT "
        f"intraOpNumThreads, interOpNumThreads=1), Kiln {meta['commit']} (kilnexec --backend=cpu), "
        f"ONNX Runtime {meta.get('ort_version') or '?'} (npm onnxruntime-node, CPU provider, all graph "
        f"optimizations), models exported by torch {meta.get('torch') or '?'} (opset 17, random weights, dynamic "
        f"batch). Kiln: median latencyMs of kilnexec --exportTimes; ORT: median of timed session.run calls after "
        f"{meta['ort_warmup']} warm-ups. Kiln/ORT = Kiln ms / ORT ms (target <= 1.0). "
        + ("Kiln bf16: the same with kilnexec --bf16 (the builder keeps float32 where bf16 has no library kernel); "
           "ORT stays float32. " if a.precision == "both" else "")
        + f"Mode: {'quick' if a.quick else 'full'}.",
        "",
    ]
    bf16 = a.precision == "both"
    lines += ["| Model | Batch | Kiln ms | ORT ms | Kiln/ORT | " + ("Kiln bf16 ms | bf16/ORT | " if bf16 else "")
              + "Kiln runs | ORT runs | Notes |",
              "|---|---|---|---|---|" + ("---|---|" if bf16 else "") + "---|---|---|"]
    for r in results:
        ratio = f"{r['kiln_ms'] / r['ort_ms']:.2f}" if r.get("kiln_ms") and r.get("ort_ms") else "—"
        ratio16 = f"{r['kiln_bf16_ms'] / r['ort_ms']:.2f}" if r.get("kiln_bf16_ms") and r.get("ort_ms") else "—"
        lines.append(f"| {LABELS[r['model']]} | {r['batch']} | {fmt_ms(r.get('kiln_ms'))} | {fmt_ms(r.get('ort_ms'))} "
                     f"| {ratio} | " + (f"{fmt_ms(r.get('kiln_bf16_ms'))} | {ratio16} | " if bf16 else "")
                     + f"{r.get('kiln_runs') or '—'} | {r.get('ort_runs') or '—'} "
                     f"| {'; '.join(r['notes'])} |")
    return "\n".join(lines) + "\n"


def write_report(a, meta, results):
    text = render(a, meta, results)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write(text)
    with open(os.path.splitext(a.out)[0] + ".json", "w") as f:
        json.dump({"meta": meta, "rows": results}, f, indent=1)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="", help="comma-separated row ids or words; ids: " +
                    " ".join(r[0] for r in ROWS))
    ap.add_argument("--quick", action="store_true",
                    help="fewer runs: Kiln 10 iterations (slow rows 2), ORT 20 runs after 3 warm-ups")
    ap.add_argument("--budget-s", type=float, default=1800, help="wall-clock budget of the whole run (s)")
    ap.add_argument("--kiln-timeout", type=float, default=300, help="limit of one kilnexec call (s)")
    ap.add_argument("--ort-timeout", type=float, default=120, help="limit of one ORT call (s)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--precision", choices=["fp32", "both"], default="fp32",
                    help="both: also run Kiln with --bf16 (kBF16) on each row, in its own column (ORT stays fp32)")
    ap.add_argument("--iterations", type=int, default=None, help="Kiln iterations (default 20, quick 10)")
    ap.add_argument("--slow-iterations", type=int, default=None,
                    help="Kiln iterations of the slow rows (default 20, quick 2): " + " ".join(sorted(SLOW_ROWS)))
    ap.add_argument("--ort-iters", type=int, default=None, help="timed ORT runs (default 50, quick 20; >= 20)")
    ap.add_argument("--kilnexec", default=os.path.join(REPO, "build", "tools", "kilnexec", "kilnexec"))
    ap.add_argument("--node", default="node")
    ap.add_argument("--ort-modules", default=os.path.join(REPO, "tests", "models"),
                    help="folder whose node_modules holds onnxruntime-node (`npm ci` there)")
    ap.add_argument("--python", default="/usr/bin/python3", help="python with torch + torchvision, for the exports")
    ap.add_argument("--workdir", default=exporter.DEFAULT_WORKDIR)
    ap.add_argument("--out", default=None, help="markdown report (default WORKDIR/cpu_results.md)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and commands; run nothing")
    a = ap.parse_args()
    a.out = a.out or os.path.join(a.workdir, "cpu_results.md")
    iters = a.iterations or (10 if a.quick else 20)
    slow_iters = a.slow_iterations or (2 if a.quick else 20)
    ort_iters = max(20, a.ort_iters or (20 if a.quick else 50))
    ort_warmup = 3 if a.quick else 10
    kiln_warmup_ms = 0 if a.quick else 500  # kilnexec always runs at least one warm-up inference

    rows = select_rows(a.rows)
    if not rows:
        sys.exit(f"run.py: --rows={a.rows} selects no row (ids: {' '.join(r[0] for r in ROWS)})")
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "cpu": cpu_model(), "nproc": os.cpu_count(), "threads": a.threads, "commit": kiln_commit(),
            "ort_warmup": ort_warmup, "quick": a.quick, "loadavg": os.getloadavg()[0]}
    log(f"rows: {' '.join(r[0] for r in rows)}; Kiln {iters} iterations ({slow_iters} on slow rows), "
        f"ORT {ort_iters} runs; budget {a.budget_s:.0f} s")
    models = list(dict.fromkeys(m for _, m, _ in rows))
    logs = os.path.join(a.workdir, "logs")

    if a.dry_run:
        print(shlex.join([a.python, os.path.join(HERE, "export.py"), f"--workdir={a.workdir}",
                          f"--models={','.join(models)}"]))
        for rid, m, b in rows:
            path = os.path.join(a.workdir, m + ".onnx")
            shape = "input:" + "x".join(str(d) for d in [b] + exporter.MODELS[m][0])
            n = slow_iters if rid in SLOW_ROWS else iters
            w = 0 if rid in SLOW_ROWS else kiln_warmup_ms
            print(f"# {rid}")
            print(shlex.join(kiln_cmd(a, path, shape, n, w, os.path.join(a.workdir, rid + ".times.json"))))
            if a.precision == "both":
                print(shlex.join(kiln_cmd(a, path, shape, n, w, os.path.join(a.workdir, rid + "_bf16.times.json"),
                                          bf16=True)))
            print(shlex.join(ort_cmd(a, path, shape, ort_warmup, ort_iters)))
        print()
        print(render(a, meta, []), end="")
        return

    os.makedirs(logs, exist_ok=True)
    budget = Budget(a.budget_s)
    results = []

    # Exports, one subprocess per model so that one failure does not stop the others.
    exported = {}
    for m in models:
        cmd = [a.python, os.path.join(HERE, "export.py"), f"--workdir={a.workdir}", f"--models={m}"]
        log(f"export {m}")
        ok, _, err = run_call(cmd, max(1.0, min(600.0, budget.left())), os.path.join(logs, f"export_{m}.log"))
        meta_path = os.path.join(a.workdir, m + ".json")
        if ok and os.path.exists(meta_path):
            with open(meta_path) as f:
                exported[m] = json.load(f)
            meta.setdefault("torch", exported[m].get("torch"))
        else:
            exported[m] = {"error": err or "no metadata written"}
            log(f"  export {m} failed: {exported[m]['error']}")

    for rid, m, b in rows:
        r = {"id": rid, "model": m, "batch": b, "notes": []}
        results.append(r)
        info = exported[m]
        if "error" in info:
            r["notes"].append(f"export: {info['error']}")
            write_report(a, meta, results)
            continue
        shape = f"{info['input']}:" + "x".join(str(d) for d in [b] + info["dims"])
        slow = rid in SLOW_ROWS
        n = slow_iters if slow else iters
        # A row at a larger batch than one already measured: scale that time by the batch ratio and fit the
        # iterations (plus kilnexec's one warm-up inference) into 80 % of the call's timeout.
        est_ms = None
        prior = [p for p in results if p["model"] == m and p.get("kiln_ms") and p["batch"] < b]
        if prior:
            est_ms = prior[-1]["kiln_ms"] * b / prior[-1]["batch"]
            fit = int(0.8 * min(a.kiln_timeout, budget.left()) * 1000 / est_ms) - 1
            if fit < n:
                slow = True
                n = max(fit, 0)

        # ORT first: it is quick, so a Kiln timeout does not lose the peer's number.
        if budget.left() < 5:
            r["notes"].append("ort: skipped (budget)")
        else:
            log(f"{rid}: ORT {ort_iters} runs")
            ok, out, err = run_call(ort_cmd(a, info["model"], shape, ort_warmup, ort_iters),
                                    min(a.ort_timeout, budget.left()), os.path.join(logs, f"{rid}.ort.log"))
            if ok:
                try:
                    j = json.loads(out.strip().splitlines()[-1])
                    r["ort_ms"], r["ort_runs"] = j["median_ms"], j["runs"]
                    meta["ort_version"] = j.get("ort_version")
                except (ValueError, KeyError, IndexError) as e:
                    r["notes"].append(f"ort: unreadable output ({e})")
            else:
                r["notes"].append(f"ort: {err}")

        if budget.left() < 10:
            r["notes"].append("kiln: skipped (budget)")
        elif n < 1:
            r["notes"].append(f"kiln: skipped: ~{est_ms / 1000:.0f} s per inference (batch-{prior[-1]['batch']} time "
                              f"x {b / prior[-1]['batch']:g}), 2 inferences do not fit the "
                              f"{min(a.kiln_timeout, budget.left()):.0f} s timeout")
        else:
            for bf16 in ([False, True] if a.precision == "both" else [False]):
                key, tag = ("kiln_bf16", "_bf16") if bf16 else ("kiln", "")
                times_path = os.path.join(a.workdir, rid + tag + ".times.json")
                if os.path.exists(times_path):
                    os.remove(times_path)
                timeout = min(a.kiln_timeout, budget.left())
                if timeout < 10:
                    r["notes"].append(f"{key}: skipped (budget)")
                    continue
                log(f"{rid}: Kiln{' bf16' if bf16 else ''} {n} iterations (timeout {timeout:.0f} s)")
                ok, _, err = run_call(kiln_cmd(a, info["model"], shape, n, kiln_warmup_ms, times_path, bf16),
                                      timeout, os.path.join(logs, f"{rid}{tag}.kiln.log"))
                if ok:
                    try:
                        with open(times_path) as f:
                            entries = json.load(f)
                        times = [t["latencyMs"] for t in entries]
                        r[key + "_ms"], r[key + "_runs"] = statistics.median(times), len(times)
                        r[key + "_compute_ms"] = statistics.median(t["computeMs"] for t in entries)
                    except (OSError, ValueError, KeyError, TypeError, statistics.StatisticsError) as e:
                        r["notes"].append(f"{key}: unreadable times ({e})")
                else:
                    r["notes"].append(f"{key}: {err}")
        if slow and r.get("kiln_runs"):
            r["notes"].append(f"slow row: Kiln {r['kiln_runs']} iterations")
        if m == "bert_enc":
            r["notes"].append(f"{exporter.ENC_LAYERS} of BERT-base's 12 layers, float input [N,128,768]")
        log(f"{rid}: Kiln {fmt_ms(r.get('kiln_ms'))} ms"
            + (f", Kiln bf16 {fmt_ms(r.get('kiln_bf16_ms'))} ms" if a.precision == "both" else "")
            + f", ORT {fmt_ms(r.get('ort_ms'))} ms"
            + (f" ({'; '.join(r['notes'])})" if r["notes"] else ""))
        write_report(a, meta, results)

    text = write_report(a, meta, results)
    log(f"report: {a.out}")
    print()
    print(text, end="")


if __name__ == "__main__":
    main()
