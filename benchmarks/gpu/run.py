#!/usr/bin/env python3
"""Kiln GPU benchmark: Kiln (through kilnexec) against PyTorch eager fp16 and torch.compile on ResNet-50,
MobileNetV2, ViT-B/16 and BERT-base, in one call on the GPU machine. Prints a markdown table last and writes it
(with the raw numbers as JSON and kilnexec's logs) next to --out. See benchmarks/gpu/README.md.

Phases, most important first, each bounded by --budget-s: export + FLOP count + eager timing, kilnexec with CUDA
graphs, kilnexec without them, torch.compile (one subprocess per model, killed when the budget runs out).
--dry-run prints the plan and the commands without importing torch or needing a GPU.
"""
import argparse
import datetime
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PEAK_TFLOPS = 790.0  # dense fp16 GEMM ceiling measured on the H200 (docs/GPU.md)
BERT_VOCAB = 30522
BERT_SEQ = 128

# name -> label, kind, ONNX inputs as (name, dims after the batch axis, numpy dtype).
MODELS = {
    "resnet50": ("ResNet-50", "cnn", [("input", [3, 224, 224], "float32")]),
    "mobilenet_v2": ("MobileNetV2", "cnn", [("input", [3, 224, 224], "float32")]),
    "vit_b_16": ("ViT-B/16", "vit", [("input", [3, 224, 224], "float32")]),
    "bert_base": ("BERT-base s128", "bert", [("input_ids", [BERT_SEQ], "int64"),
                                             ("attention_mask", [BERT_SEQ], "int64")]),
}
OUTPUTS = {"cnn": ["output"], "vit": ["output"], "bert": ["last_hidden_state", "pooler_output"]}

# (row id, model, batch), in the order of the table.
ROWS = [
    ("resnet50_b1", "resnet50", 1), ("resnet50_b256", "resnet50", 256),
    ("mobilenet_v2_b1", "mobilenet_v2", 1), ("mobilenet_v2_b256", "mobilenet_v2", 256),
    ("vit_b_16_b1", "vit_b_16", 1), ("vit_b_16_b64", "vit_b_16", 64),
    ("bert_base_b1", "bert_base", 1), ("bert_base_b128", "bert_base", 128),
]

T0 = time.monotonic()


def log(msg):
    print(f"[{time.monotonic() - T0:6.1f}s] {msg}", flush=True)


def first_line(text, limit=160):
    """The first informative line of an error (kilnexec's "[E] ..." line if there is one), for a table cell."""
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    pick = next((l for l in lines if l.startswith("[E]")), None)
    if pick is None:
        pick = next((l for l in reversed(lines) if "Error" in l or "error" in l), lines[-1] if lines else "error")
    pick = pick.replace("|", "/")
    return pick if len(pick) <= limit else pick[:limit - 3] + "..."


# ----------------------------------------------------------------------------------------------------------------
# Models (torch imported lazily so that --dry-run needs none of it)


def build_model(name):
    """The model in fp32 on the CPU, eval mode, random weights (same seed everywhere)."""
    import torch
    torch.manual_seed(0)
    if name == "bert_base":
        import transformers

        class Bert(torch.nn.Module):
            """BertModel(BertConfig()) with positional (input_ids, attention_mask) and tuple outputs."""

            def __init__(self):
                super().__init__()
                self.bert = transformers.BertModel(transformers.BertConfig())

            def forward(self, ids, mask):
                out = self.bert(input_ids=ids, attention_mask=mask)
                return out.last_hidden_state, out.pooler_output
        return Bert().eval()
    import torchvision
    return getattr(torchvision.models, name)(weights=None).eval()


def make_inputs(name, batch, device, half, seed):
    """One set of inputs for the model at `batch` (fp16 + channels_last for the CNN peers)."""
    import torch
    g = torch.Generator().manual_seed(seed)
    kind = MODELS[name][1]
    if kind == "bert":
        ids = torch.randint(0, BERT_VOCAB, (batch, BERT_SEQ), generator=g, dtype=torch.int64)
        mask = torch.ones(batch, BERT_SEQ, dtype=torch.int64)
        return (ids.to(device), mask.to(device))
    x = torch.randn(batch, 3, 224, 224, generator=g)
    if half:
        x = x.half()
    x = x.to(device)
    if kind == "cnn" and device != "cpu":
        x = x.contiguous(memory_format=torch.channels_last)
    return (x,)


def peer_model(name):
    """The PyTorch peer: fp16 on the GPU, channels_last for CNNs."""
    import torch
    m = build_model(name).half().cuda()
    if MODELS[name][1] == "cnn":
        m = m.to(memory_format=torch.channels_last)
    return m


def export_onnx(name, path):
    """Legacy exporter, opset 17, dynamic batch axis on every input and output."""
    import torch
    model = build_model(name)
    args = make_inputs(name, 2, "cpu", False, seed=1)
    in_names = [i[0] for i in MODELS[name][2]]
    out_names = OUTPUTS[MODELS[name][1]]
    dyn = {n: {0: "batch"} for n in in_names + out_names}
    # Gradients stay on: under no_grad, eval-mode attention takes a fused path the legacy exporter cannot write.
    torch.onnx.export(model, args, path, opset_version=17, input_names=in_names, output_names=out_names,
                      dynamic_axes=dyn, dynamo=False, external_data=False)
    import onnx
    graph = onnx.load(path, load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    got = [i.name for i in graph.input if i.name not in inits]
    if got != in_names:
        raise RuntimeError(f"exported inputs are {got}, expected {in_names}")


def count_flops(model, name):
    """FLOPs of one item (batch 1; all four models scale linearly with the batch) by FlopCounterMode: 2*MACs of
    conv / mm / bmm / attention. Gradients stay on so that attention is not a fused native op it cannot see."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    args = make_inputs(name, 1, "cuda", True, seed=2)
    counter = FlopCounterMode(display=False)
    with counter:
        model(*args)
    return float(counter.get_total_flops())


def time_cuda(fn, input_sets, warmup, runs):
    """Median ms of `runs` forwards timed with CUDA events, rotating over the preallocated input sets."""
    import torch
    for i in range(warmup):
        fn(*input_sets[i % len(input_sets)])
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for i in range(runs):
        args = input_sets[i % len(input_sets)]
        starts[i].record()
        fn(*args)
        ends[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


# ----------------------------------------------------------------------------------------------------------------
# kilnexec


def kiln_paths(work, row_id, graph, loaded=False):
    tag = f"{row_id}_{'graph' if graph else 'nograph'}{'_loaded' if loaded and graph else ''}"
    return os.path.join(work, tag + ".times.json"), os.path.join(work, row_id + ".plan")


def bert_input_files(work, batch):
    return [(n, os.path.join(work, f"bert_b{batch}.{n}.npy")) for n, _, _ in MODELS["bert_base"][2]]


def kiln_command(args, work, row_id, name, batch, graph, load_plan=False, save_plan=True):
    times, plan = kiln_paths(work, row_id, graph, loaded=load_plan)
    shapes = ",".join(f"{n}:{'x'.join(str(d) for d in [batch] + dims)}" for n, dims, _ in MODELS[name][2])
    cmd = [args.kilnexec]
    if load_plan:
        cmd += [f"--loadEngine={plan}", "--backend=cuda"]
    else:
        cmd += [f"--onnx={os.path.join(work, name + '.onnx')}", "--backend=cuda", "--fp16"]
        if save_plan:
            cmd += [f"--saveEngine={plan}"]
    cmd += [f"--shapes={shapes}"]
    if name == "bert_base":
        cmd += ["--loadInputs=" + ",".join(f"{n}:{f}" for n, f in bert_input_files(work, batch))]
    if graph:
        cmd += ["--useCudaGraph"]
    cmd += ["--noDataTransfers", f"--warmUp={args.kiln_warmup_ms}", f"--iterations={args.kiln_iterations}",
            f"--duration={args.kiln_duration}", f"--exportTimes={times}"]
    return cmd


def median_from_times(path, stdout):
    """Median GPU compute ms from the --exportTimes JSON (trtexec format), else from the printed summary."""
    try:
        with open(path) as f:
            data = json.load(f)
        for key in ("computeMs", "latencyMs"):
            vals = [float(e[key]) for e in data if isinstance(e.get(key), (int, float))]
            if vals:
                return statistics.median(vals), key, len(vals)
    except (OSError, ValueError, TypeError, AttributeError):
        pass
    for line in stdout.splitlines():
        if "Compute Time:" in line and "median = " in line:
            return float(line.split("median = ")[1].split()[0]), "stdout median", 0
    raise RuntimeError("no timings in " + path + " nor in kilnexec's output")


def run_kiln(args, work, logdir, row_id, name, batch, graph, deadline, loaded=False):
    """Runs kilnexec once; returns (median ms, note). Raises with the first error line on failure.

    graph and not loaded: builds the plan, saves it and times it in the building process; graph and loaded: times
    the saved plan in a fresh process (as a deployment runs it, like trtexec --loadEngine); no graph: the saved plan
    too (or a new build where there is none)."""
    times, plan = kiln_paths(work, row_id, graph, loaded)
    if loaded and not os.path.exists(plan):
        raise RuntimeError("no saved plan to load")
    load = loaded or (not graph and os.path.exists(plan))
    attempts = [kiln_command(args, work, row_id, name, batch, graph, load_plan=load, save_plan=graph and not load)]
    if graph and not load and os.path.exists(plan):
        os.remove(plan)  # a plan of an earlier run must not stand in for this build's
    if graph and not load:  # if saving the plan is what fails, measure without it
        attempts.append(kiln_command(args, work, row_id, name, batch, graph, save_plan=False))
    if load:  # if loading the plan fails, build again
        attempts.append(kiln_command(args, work, row_id, name, batch, graph, save_plan=False))
    for n, cmd in enumerate(attempts):
        left = deadline - time.monotonic()
        if left < 15:
            raise RuntimeError("skipped (budget)")
        if os.path.exists(times):
            os.remove(times)
        log("kiln: " + " ".join(shlex.quote(c) for c in cmd))
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=min(args.kiln_timeout, left))
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            out += f"\n[E] kilnexec timed out after {min(args.kiln_timeout, left):.0f} s"
            rc = -1
        logfile = os.path.join(logdir, f"{row_id}_{'graph' if graph else 'nograph'}{'_loaded' if loaded else ''}_{n}.log")
        with open(logfile, "w") as f:
            f.write(" ".join(shlex.quote(c) for c in cmd) + "\n\n" + out)
        if rc == 0:
            ms, key, count = median_from_times(times, out)
            note = "" if key == "computeMs" else f"kiln time from {key}"
            if "cpu backend" in out:
                note = (note + "; " if note else "") + "kilnexec ran on the cpu backend"
            return ms, note
        err = first_line(out) if out.strip() else f"kilnexec exit code {rc}"
        retry = n + 1 < len(attempts) and (
            ("save" in out.lower() or "serializ" in out.lower()) if graph and not load else True)
        if not retry or rc == -1:
            raise RuntimeError(err)
        log(f"kiln: {err}; retrying")
    raise RuntimeError("unreachable")


# ----------------------------------------------------------------------------------------------------------------
# torch.compile worker (a subprocess per model, so that a compile that runs long can be killed)


def compile_worker(args):
    import torch
    torch.backends.cudnn.benchmark = True
    name = args.worker_compile
    model = peer_model(name)
    for batch in [int(b) for b in args.worker_batches.split(",")]:
        res = {"model": name, "batch": batch}
        try:
            torch._dynamo.reset()
            cm = torch.compile(model, mode=args.compile_mode, dynamic=False)
            sets = [make_inputs(name, batch, "cuda", True, seed=10 + i) for i in range(args.input_sets)]
            cudagraphs = args.compile_mode in ("reduce-overhead", "max-autotune")

            def fn(*a):
                if cudagraphs:
                    torch.compiler.cudagraph_mark_step_begin()
                return cm(*a)
            t = time.monotonic()
            with torch.no_grad():
                fn(*sets[0])
                torch.cuda.synchronize()
                res["compile_s"] = time.monotonic() - t
                res["ms"] = time_cuda(fn, sets, args.warmup, args.runs)
        except Exception as e:  # reported in the table; the next batch still runs
            res["error"] = first_line(f"{type(e).__name__}: {e}")
            traceback.print_exc()
        print("RESULT " + json.dumps(res), flush=True)


def run_compile(args, logdir, name, batches, deadline, dry=False):
    """Runs the compile worker for one model; returns {batch: result dict}."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker-compile", name,
           "--worker-batches", ",".join(str(b) for b in batches), "--compile-mode", args.compile_mode,
           "--warmup", str(args.warmup), "--runs", str(args.runs), "--input-sets", str(args.input_sets)]
    if dry:
        print("compile: " + " ".join(shlex.quote(c) for c in cmd))
        return {}
    left = deadline - time.monotonic()
    if left < args.compile_min_s:
        return {b: {"error": "compile: skipped (budget)"} for b in batches}
    logfile = os.path.join(logdir, f"compile_{name}.log")
    log(f"compile: {name} batches {batches} (mode {args.compile_mode}, at most {left:.0f} s)")
    timed_out = False
    with open(logfile, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            p.wait(timeout=left)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, signal.SIGKILL)  # the worker and its inductor compile workers
            p.wait()
    results = {}
    with open(logfile) as f:
        text = f.read()
    for line in text.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            results[r["batch"]] = r
    for b in batches:
        if b not in results:
            why = f"timeout after {left:.0f} s (budget)" if timed_out else first_line(text or f"exit {p.returncode}")
            results[b] = {"error": "compile: " + why}
    return results


# ----------------------------------------------------------------------------------------------------------------
# Report


def fmt(v, digits=3):
    if v is None:
        return "—"
    if v >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}" if v < 10 else f"{v:.1f}" if v < 100 else f"{v:.0f}"


def ratio(peer, kiln):
    return f"{peer / kiln:.2f}×" if peer and kiln else "—"


def kiln_figure(r):
    """Kiln's figure for a row: the saved plan with CUDA graphs in a fresh process, else the building process's."""
    return r.get("kiln_loaded_ms") or r.get("kiln_ms")


def table(rows, results, compile_mode):
    head = ["Model", "Batch", "Kiln ms (graph)", "Kiln ms (graph, building process)", "Kiln ms (no graph)",
            "Eager ms", f"Compile ms ({compile_mode})",
            "Kiln items/s", "Eager/Kiln", "Compile/Kiln", "GFLOP", "Kiln TFLOP/s", "% of 790", "Notes"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for row_id, name, batch in rows:
        r = results.get(row_id, {})
        kiln = kiln_figure(r)
        flops = r.get("flops")
        tflops = flops / (kiln * 1e-3) / 1e12 if flops and kiln else None
        cells = [MODELS[name][0], str(batch), fmt(kiln), fmt(r.get("kiln_ms")), fmt(r.get("kiln_nograph_ms")),
                 fmt(r.get("eager_ms")),
                 fmt(r.get("compile_ms")), fmt(batch / kiln * 1e3 if kiln else None),
                 ratio(r.get("eager_ms"), kiln), ratio(r.get("compile_ms"), kiln),
                 fmt(flops / 1e9 if flops else None), fmt(tflops),
                 f"{100 * tflops / PEAK_TFLOPS:.1f}" if tflops else "—", "; ".join(r.get("notes", []))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def environment():
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    try:
        import torch
        env["gpu"] = torch.cuda.get_device_name()
        env["torch"] = torch.__version__
        env["cuda"] = torch.version.cuda
        env["cudnn"] = str(torch.backends.cudnn.version())
        import torchvision
        import transformers
        env["torchvision"] = torchvision.__version__
        env["transformers"] = transformers.__version__
    except Exception as e:  # a report without some fields beats no report
        env["error"] = first_line(str(e))
    try:
        env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except Exception:
        env["driver"] = "unknown (nvidia-smi failed)"
    # The GPU machine receives a copy of the working tree whose .git may lag behind it: KILN_COMMIT (set by whoever
    # ships the tree) wins over what git says there.
    env["kiln_commit"] = os.environ.get("KILN_COMMIT", "")
    if not env["kiln_commit"]:
        try:
            env["kiln_commit"] = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                                capture_output=True, text=True, timeout=20).stdout.strip() or "unknown"
        except Exception:
            env["kiln_commit"] = "unknown"
    return env


def write_report(args, rows, results, env, final):
    text = table(rows, results, args.compile_mode)
    md = [f"### GPU benchmark, {env.get('date')}{'' if final else ' (partial: the run did not finish)'}", "",
          f"GPU {env.get('gpu')}, driver {env.get('driver')}, torch {env.get('torch')} (CUDA {env.get('cuda')}, "
          f"cuDNN {env.get('cudnn')}), torchvision {env.get('torchvision')}, transformers {env.get('transformers')}, "
          f"Kiln {env.get('kiln_commit')}. Kiln: kilnexec --backend=cuda --fp16, median compute time of "
          f"{args.kiln_iterations} inferences; Kiln ms (graph): the saved plan loaded in a fresh kilnexec process "
          f"(--loadEngine, as a deployment runs it), replayed as a CUDA graph; beside it the same plan timed in the "
          f"process that built it (a few % slower at batch 1, see RESULTS.md); peers: fp16, median of {args.runs} runs (CUDA events), "
          f"torch.compile mode {args.compile_mode}. Speed-up = peer ms / Kiln ms (>1: Kiln faster). "
          f"TFLOP/s = model FLOPs (FlopCounterMode, 2*MACs) / Kiln time; % of the {PEAK_TFLOPS:.0f} TFLOP/s "
          f"fp16 GEMM ceiling.", "", text, ""]
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write("\n".join(md))
        with open(os.path.splitext(args.out)[0] + ".json", "w") as f:
            json.dump({"env": env, "args": vars(args), "results": results}, f, indent=1)
    return "\n".join(md)


# ----------------------------------------------------------------------------------------------------------------


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    out_default = os.path.join(os.environ["OUT"], "gpu_results.md") if os.environ.get("OUT") else None
    ap.add_argument("--kilnexec", default=os.path.join(REPO, "build-gpu", "tools", "kilnexec", "kilnexec"))
    ap.add_argument("--out", default=out_default, help="markdown report (default $OUT/gpu_results.md); the raw "
                    "numbers go to the same name with .json, kilnexec's logs to kiln_logs/ beside it")
    ap.add_argument("--workdir", default="/tmp/kiln_gpu_bench", help="ONNX models, plans, inputs, times")
    ap.add_argument("--rows", default="", help="comma-separated row ids or substrings of them (e.g. resnet50_b1,bert); "
                    "rows: " + ", ".join(r[0] for r in ROWS))
    ap.add_argument("--quick", action="store_true", help="50 runs, shorter warm-ups, no kilnexec run without "
                    "CUDA graphs, no torch.compile")
    ap.add_argument("--skip-compile", action="store_true")
    ap.add_argument("--skip-nograph", action="store_true", help="no kilnexec run without --useCudaGraph")
    ap.add_argument("--compile-mode", default="reduce-overhead",
                    choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"])
    ap.add_argument("--budget-s", type=float, default=450.0, help="wall-clock budget of the whole run; phases that "
                    "would pass it are skipped (and marked so)")
    ap.add_argument("--kiln-timeout", type=float, default=180.0, help="seconds per kilnexec call")
    ap.add_argument("--compile-min-s", type=float, default=45.0, help="start a compile worker only with this many "
                    "seconds of budget left")
    ap.add_argument("--kiln-warmup-ms", type=int, default=200)
    ap.add_argument("--kiln-iterations", type=int, default=100)
    ap.add_argument("--kiln-duration", type=float, default=0, help="kilnexec --duration (its default is 3 s)")
    ap.add_argument("--warmup", type=int, default=10, help="peer warm-up runs")
    ap.add_argument("--runs", type=int, default=100, help="timed peer runs (median)")
    ap.add_argument("--input-sets", type=int, default=3, help="preallocated input sets the peers rotate over")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and commands; no torch, no GPU")
    ap.add_argument("--worker-compile", help=argparse.SUPPRESS)
    ap.add_argument("--worker-batches", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.quick:
        a.skip_compile = a.skip_nograph = True
        a.runs = min(a.runs, 50)
        a.warmup = min(a.warmup, 5)
        a.kiln_iterations = min(a.kiln_iterations, 50)
        a.kiln_warmup_ms = min(a.kiln_warmup_ms, 100)
    a.runs = max(a.runs, 50)
    a.input_sets = max(a.input_sets, 2)
    return a


def main():
    args = parse_args()
    if args.worker_compile:
        return compile_worker(args)
    wanted = [w for w in args.rows.split(",") if w]
    ids = {r[0] for r in ROWS}
    # A full row id selects that row only (bert_base_b1 is not bert_base_b128); other words are substrings.
    rows = [r for r in ROWS if not wanted or any(w == r[0] if w in ids else w in r[0] for w in wanted)]
    if not rows:
        sys.exit(f"--rows={args.rows} matches no row of: {', '.join(r[0] for r in ROWS)}")
    models = list(dict.fromkeys(r[1] for r in rows))
    deadline = T0 + args.budget_s
    work = args.workdir
    results = {r[0]: {"model": r[1], "batch": r[2], "notes": []} for r in rows}

    if args.dry_run:
        print(f"# rows: {', '.join(r[0] for r in rows)}")
        for name in models:
            print(f"export: {name} -> {os.path.join(work, name + '.onnx')} (opset 17, dynamo=False, dynamic batch)")
        for row_id, name, batch in rows:
            print(f"eager: {name} batch {batch} (fp16, {args.warmup} warm-up, median of {args.runs})")
        for row_id, name, batch in rows:
            if name == "bert_base":
                for n, f in bert_input_files(work, batch):
                    print(f"npy: {f} ({n}, int64 {batch}x{BERT_SEQ})")
            print("kiln: " + " ".join(shlex.quote(c) for c in kiln_command(args, work, row_id, name, batch, True)))
            print("kiln: " + " ".join(shlex.quote(c) for c in
                                      kiln_command(args, work, row_id, name, batch, True, load_plan=True)))
            if not args.skip_nograph:
                print("kiln: " + " ".join(shlex.quote(c) for c in
                                          kiln_command(args, work, row_id, name, batch, False, load_plan=True)))
        if not args.skip_compile:
            for name in models:
                run_compile(args, "", name, [r[2] for r in rows if r[1] == name], deadline, dry=True)
        print(table(rows, results, args.compile_mode))
        return

    import torch
    torch.backends.cudnn.benchmark = True
    os.makedirs(work, exist_ok=True)
    outdir = os.path.dirname(os.path.abspath(args.out)) if args.out else work
    logdir = os.path.join(outdir, "kiln_logs")
    os.makedirs(logdir, exist_ok=True)
    env = environment()
    log(f"environment: {env}")
    have_onnx = {}

    # Phase 1: export, FLOPs, eager.
    for name in models:
        my_rows = [r for r in rows if r[1] == name]
        try:
            t = time.monotonic()
            export_onnx(name, os.path.join(work, name + ".onnx"))
            have_onnx[name] = True
            log(f"exported {name} in {time.monotonic() - t:.1f} s")
        except Exception as e:
            traceback.print_exc()
            for r in my_rows:
                results[r[0]]["notes"].append("export: " + first_line(f"{type(e).__name__}: {e}"))
        if name == "bert_base":
            import numpy as np
            rng = np.random.default_rng(0)
            for _, _, batch in my_rows:
                files = dict(bert_input_files(work, batch))
                np.save(files["input_ids"], rng.integers(0, BERT_VOCAB, (batch, BERT_SEQ), dtype=np.int64))
                np.save(files["attention_mask"], np.ones((batch, BERT_SEQ), dtype=np.int64))
        try:
            model = peer_model(name)
            try:
                flops = count_flops(model, name)
            except Exception as e:
                traceback.print_exc()
                flops = None
                for r in my_rows:
                    results[r[0]]["notes"].append("flops: " + first_line(f"{type(e).__name__}: {e}"))
            for row_id, _, batch in my_rows:
                if flops:
                    results[row_id]["flops"] = flops * batch
                try:
                    sets = [make_inputs(name, batch, "cuda", True, seed=10 + i) for i in range(args.input_sets)]
                    with torch.no_grad():
                        ms = time_cuda(model, sets, args.warmup, args.runs)
                    results[row_id]["eager_ms"] = ms
                    log(f"eager {row_id}: {ms:.3f} ms")
                    del sets
                except Exception as e:
                    traceback.print_exc()
                    results[row_id]["notes"].append("eager: " + first_line(f"{type(e).__name__}: {e}"))
            del model
        except Exception as e:
            traceback.print_exc()
            for r in my_rows:
                results[r[0]]["notes"].append("eager: " + first_line(f"{type(e).__name__}: {e}"))
        torch.cuda.empty_cache()
        write_report(args, rows, results, env, final=False)

    # Phase 2 and 3: kilnexec with, then without CUDA graphs.
    # (graph, loaded): build, save and time; the saved plan in a fresh process; without graphs.
    phases = [(True, False), (True, True)] + ([] if args.skip_nograph else [(False, False)])
    if not os.path.exists(args.kilnexec):
        phases = []
        for r in rows:
            results[r[0]]["notes"].append(f"kiln: no kilnexec at {args.kilnexec}")
    for graph, loaded in phases:
        key = "kiln_loaded_ms" if loaded else "kiln_ms" if graph else "kiln_nograph_ms"
        what = " (plan loaded)" if loaded else "" if graph else " (no graph)"
        for row_id, name, batch in rows:
            if not have_onnx.get(name):
                continue
            if loaded and "kiln_ms" not in results[row_id]:
                continue  # no plan was built
            if (loaded or not graph) and any("timed out" in n or "budget" in n for n in results[row_id]["notes"]):
                continue  # the run with CUDA graphs used up its time: no second try
            try:
                ms, note = run_kiln(args, work, logdir, row_id, name, batch, graph, deadline, loaded)
                results[row_id][key] = ms
                if note and note not in results[row_id]["notes"]:
                    results[row_id]["notes"].append(note)
                log(f"kiln {row_id}{what or ' (graph)'}: {ms:.3f} ms")
            except Exception as e:
                results[row_id]["notes"].append(f"kiln{what}: {first_line(str(e))}")
                log(f"kiln {row_id}: {e}")
            write_report(args, rows, results, env, final=False)

    # Phase 4: torch.compile, one worker per model while the budget lasts.
    if args.skip_compile:
        for r in rows:
            results[r[0]]["notes"].append("compile skipped")
    else:
        for name in models:
            batches = [r[2] for r in rows if r[1] == name]
            got = run_compile(args, logdir, name, batches, deadline)
            for row_id, _, batch in [r for r in rows if r[1] == name]:
                g = got.get(batch, {})
                if "ms" in g:
                    results[row_id]["compile_ms"] = g["ms"]
                    results[row_id]["compile_s"] = g.get("compile_s")
                    results[row_id]["notes"].append(f"compiled in {g.get('compile_s', 0):.0f} s")
                    log(f"compile {row_id}: {g['ms']:.3f} ms (compiled in {g.get('compile_s', 0):.0f} s)")
                else:
                    results[row_id]["notes"].append(g.get("error", "compile: no result"))
            write_report(args, rows, results, env, final=False)

    md = write_report(args, rows, results, env, final=True)
    log(f"done in {time.monotonic() - T0:.0f} s; report: {args.out or '(no --out, not written)'}")
    print()
    print(md)


if __name__ == "__main__":
    main()
