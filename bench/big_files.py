"""`python -m bench.big_files`: time and peak memory of ingesting one big valid file.

For each format that can plausibly be big, writes a valid file of about 20 MB and 100 MB
(a real header, then rows repeated with varying values, as samples/ and the tests write
them) into a temporary folder, and runs `examine()` then `schemas.validate.validate` on it
in a fresh subprocess, as ingestion does. The child reports its wall time and its own peak
RSS (getrusage ru_maxrss), so the figures are those of one file, imports included.

    python -m bench.big_files [--sizes 20,100] [--formats fio_terse,gdsio_text]
                              [--budget-mb 6000] [--keep DIR]

A size whose projected peak (the smaller size's RSS/size ratio times the bigger size)
is above --budget-mb is skipped rather than run: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samples.generate import GPU_UUID, MODELS, PERCENTILE_SPREAD, power_w
from samples.storage import KIB, MIB, fio_job, gdsio_log, saturating

PROJECT = Path(__file__).resolve().parents[1]
MB = 1_000_000
CHILD_TIMEOUT_S = 900


@dataclass(frozen=True)
class BigFile:
    """A valid file of one format: `head`, then `row(i)` for i = 0, 1, ... until the size
    is reached, then `tail`."""

    format: str  # the format detection must give
    relpath: str  # where it would lie in a raw root (some parsers read the path)
    head: str
    row: Callable[[int], str]
    tail: str = ""


# ---- the formats ---------------------------------------------------------------------------

def _one(value: float) -> str:
    return str(round(value, 1))  # Model Analyzer's cell format


_MA_HEAD = ("Model,Batch,Concurrency,Model Config Path,Instance Group,Max Batch Size,"
            "Satisfies Constraints,Throughput (infer/sec),p50 Latency (ms),p95 Latency (ms),"
            "p99 Latency (ms),Avg Latency (ms),Server Queue time (ms)\n")


def _ma_row(i: int) -> str:
    model = MODELS[i % len(MODELS)]
    c, instances = 1 + i // len(MODELS), 1 + i % 2
    x, avg = model.throughput(c, instances), model.latency_avg_ms(c, instances)
    queue = max(0.0, avg - model.latency_avg_ms(1, instances))
    return (f"{model.name},1,{c},{model.name}_config_{i % 2},{instances}:GPU,8,Yes,{_one(x)},"
            f"{_one(avg * PERCENTILE_SPREAD['p50'])},{_one(avg * PERCENTILE_SPREAD['p95'])},"
            f"{_one(avg * PERCENTILE_SPREAD['p99'])},{_one(avg)},{_one(queue)}\n")


_PA_HEAD = ("Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
            "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
            "p50 latency,p90 latency,p95 latency,p99 latency,Avg latency,request/response,"
            "response wait,Avg GPU Utilization,Avg GPU Power Usage,Max GPU Memory Usage,"
            "Total GPU Memory\n")


def _pa_row(i: int) -> str:
    model, c = MODELS[1], 1 + i
    x, avg_us = model.throughput(c), model.latency_avg_ms(c) * 1000.0
    service_us = model.latency_avg_ms(1) * 1000.0
    util = model.utilization_pct(c)
    p = [int(avg_us * PERCENTILE_SPREAD[k]) for k in ("p50", "p90", "p95", "p99")]
    return (f"{c},{x:.6g},42,180,{int(avg_us - service_us)},35,{int(service_us - 300)},28,9,"
            f"{p[0]},{p[1]},{p[2]},{p[3]},{int(avg_us)},51,{int(avg_us - 60)},"
            f"{GPU_UUID}:{util / 100:.4f};,{GPU_UUID}:{power_w(util):.3f};,"
            f"{GPU_UUID}:{int(model.gpu_memory_mb(c) * 1e6)};,{GPU_UUID}:81559000000;\n")


# GenAI-Perf writes one row per metric; only its GPU telemetry section grows (per GPU).
_GENAI_HEAD = (
    "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\r\n"
    "Time To First Token (ms),63.00,44.10,100.80,94.50,81.90,75.60,68.04,61.74,56.70\r\n"
    'Request Latency (ms),"1,146.31",802.42,"1,834.10","1,719.47","1,490.20","1,375.57",'
    '"1,237.67","1,123.38","1,031.68"\r\n'
    "Inter Token Latency (ms),4.25,2.98,6.80,6.38,5.53,5.10,4.59,4.17,3.83\r\n"
    "Output Sequence Length (tokens),256.00,256.00,256.00,256.00,256.00,256.00,256.00,"
    "256.00,256.00\r\n"
    "\r\n"
    "Metric,Value\r\n"
    '"Output Token Throughput (per sec)","1,781.61"\r\n'
    "Request Throughput (per sec),6.96\r\n"
    "\r\n"
    "Metric,GPU,avg,min,max,p99,p95,p90,p75,p50,p25\r\n"
)


def _genai_row(i: int) -> str:
    util = 40.0 + i % 60
    return (f"GPU Power Usage (W),gpu{i},{power_w(util):.2f},100.00,700.00,699.00,690.00,"
            f"680.00,650.00,600.00,550.00\r\n"
            f"GPU Utilization (%),gpu{i},{util:.2f},0.00,100.00,100.00,99.00,98.00,80.00,"
            f"60.00,20.00\r\n")


_ELBENCHO_HEAD = (
    "ISO date,label,path type,paths,hosts,threads,dirs,files,file size,block size,direct IO,"
    "random,random aligned,IO depth,shared paths,truncate,operation,time ms [first],"
    "time ms [last],entries/s [first],entries/s [last],IOPS [first],IOPS [last],"
    "MiB/s [first],MiB/s [last],CPU% [first],CPU% [last],entries [first],entries [last],"
    "MiB [first],MiB [last],Ent lat us [min],Ent lat us [avg],Ent lat us [max],"
    "IO lat us [min],IO lat us [avg],IO lat us [max],rwmix read entries/s [first],"
    "rwmix read entries/s [last],rwmix read IOPS [first],rwmix read IOPS [last],"
    "rwmix read MiB/s [first],rwmix read MiB/s [last],rwmix read entries [first],"
    "rwmix read entries [last],rwmix read MiB [first],rwmix read MiB [last],"
    "rwmix read Ent lat us [min],rwmix read Ent lat us [avg],rwmix read Ent lat us [max],"
    "rwmix read IO lat us [min],rwmix read IO lat us [avg],rwmix read IO lat us [max],"
    "version,command\n")
_ELBENCHO_COMMAND = ('"/usr/bin/elbencho" "--hosts" "node01 node02 node03 node04" "--threads" '
                     '"{t}" "--files" "1" "--size" "1t" "--block" "1m" "--write" "--read" '
                     '"--direct" "--timelimit" "45" "/vast/bench"')


def _elbencho_row(i: int) -> str:
    threads, op = 1 + i % 64, ("WRITE", "READ")[i % 2]
    mib = int(saturating(4800.0 if op == "WRITE" else 9100.0, 16.0, threads * 4))
    elapsed = 45000 + i % 997
    return (f"2022-03-09T15:41:14-0800,,dir,1,4,{threads},1,1,1099511627776,1048576,1,0,,1,1,0,"
            f"{op},{elapsed - 6},{elapsed},,,{mib - 40},{mib},{mib - 40},{mib},0,1,,,"
            f"{mib * 45 - 1700},{mib * 45},,,,2379,{6621 + i % 100},93525,,,,,,,,,,,,,,,,,"
            f"2.1-0,{_ELBENCHO_COMMAND.format(t=threads)}\n")


_TF_HEAD = "\n".join([
    "TensorFlow:  2.11", "Model:       resnet50", "Dataset:     imagenet (synthetic)",
    "Mode:        training", "SingleSess:  False", "Batch size:  2048 global",
    "             256 per device", "Num batches: 100000000", "Num epochs:  0.02",
    "Devices:     ['/gpu:0', '/gpu:1', '/gpu:2', '/gpu:3', '/gpu:4', '/gpu:5', '/gpu:6', "
    "'/gpu:7']", "NUMA bind:   False", "Data format: NCHW", "Optimizer:   sgd",
    "Variables:   replicated", "AllReduce:   None", "==========", "Generating training model",
    "Initializing graph", "Running warm up", "Done warm up", "Step\tImg/sec\ttotal_loss",
]) + "\n"


def _tf_row(i: int) -> str:
    """--display_every=1: one line per step, the running mean settling."""
    step = i + 1
    mean = 21280.0 * (1.0 - 0.3 / step)
    unc, jitter = (0.0, 0.0) if step == 1 else (mean * 0.0008, mean * 0.002)
    return (f"{step}\timages/sec: {mean:.1f} +/- {unc:.1f} (jitter = {jitter:.1f})\t"
            f"{7.9 - 1e-7 * step:.3f}\n")


_TF_TAIL = "-" * 64 + "\ntotal images/sec: 21274.50\n" + "-" * 64 + "\n"


_FIO_HEAD = ('{\n  "fio version": "fio-3.36",\n  "timestamp": 1728900000,\n'
             '  "time": "Mon Oct 14 10:00:00 2026",\n  "global options": {\n'
             '    "ioengine": "libaio",\n    "direct": "1",\n    "iodepth": "32",\n'
             '    "runtime": "60",\n    "time_based": "1",\n    "directory": "/mnt/vast"\n'
             '  },\n  "jobs": [\n')


def _fio_row(i: int) -> str:
    jobs = 1 + i % 16
    rw = ("read", "write", "randread")[i % 3]
    block = 4 * KIB if rw == "randread" else MIB
    job = fio_job(f"{rw}-j{jobs}-{i}", rw, block, jobs, saturating(18e9, 6.0, jobs))
    text = json.dumps(job, indent=2).replace("\n", "\n    ")
    return ("" if i == 0 else ",\n") + "    " + text


_FIO_TAIL = "\n  ]\n}\n"


def _terse_block(io_kib: int, bw_kib: int, iops: int, clat_mean: float) -> list[object]:
    """One direction of a terse v3 line, in fio's field order (stat.c)."""
    percentiles = [(1.0, 19), (5.0, 35), (10.0, 46), (20.0, 59), (30.0, 70), (40.0, 81),
                   (50.0, 350), (60.0, 1105), (70.0, 1957), (80.0, 3063), (90.0, 5013),
                   (95.0, 5996), (99.0, 6193), (99.5, 6651), (99.9, 7962), (99.95, 8355),
                   (99.99, 8978)]
    fields: list[object] = [io_kib, bw_kib, iops, 240008, 2, 6373, 3609.671898, 1300.786042,
                            4, 15064, round(clat_mean, 6), 1955.68544]
    fields += [f"{p:f}%={v}" for p, v in percentiles] + ["0%=0"] * 3
    fields += [85, 17765, round(clat_mean + 3.5, 6), 1754.479917, 877680, 954224,
               "99.993265%", 904349.089583, 8047.69875]
    return fields


_TERSE_TAIL = (["19.475682%", "80.304741%", 364, 0, 7675] + ["0.0%"] * 6 + ["99.9%"]
               + ["0.00%"] * 22 + ["nvme0n1", 54221151, 23241214, 64, 5, 26325880, 473998,
                                   26836172, "100.00%"])


def _terse_row(i: int) -> str:
    read_kib = 217065688 + i
    fields = [3, "fio-3.1", f"randrw-{i}", 0, 0,
              *_terse_block(read_kib, 904410 + i % 1000, 226102, 1494.504908 + i % 10),
              *_terse_block(93042472 + i, 387664, 96916, 974.748007), *_TERSE_TAIL]
    return ";".join(str(f) for f in fields) + "\n"


def _gdsio_row(i: int) -> str:
    threads = 1 + i % 32
    io_type, flag = ("READ", 0) if i % 2 == 0 else ("WRITE", 1)
    return gdsio_log(io_type, flag, threads, saturating(25.0, 8.0, threads))


_SUMMARY_HEAD = ('{\n    "start": "2024-08-07T14:23:23.782006",\n    "num_accelerators": 36,\n'
                 '    "num_hosts": 18,\n    "hostname": "c008",\n    "metric": {\n'
                 '        "train_au_percentage": [\n')


def _summary_row(i: int) -> str:
    """One epoch's accelerator utilisation; DLIO writes one entry per epoch."""
    return ("" if i == 0 else ",\n") + f"            {93.0 + (i * 7919 % 1000) / 1000:.13f}"


_SUMMARY_TAIL = (
    '\n        ],\n        "train_au_mean_percentage": 93.5852472392038,\n'
    '        "train_au_meet_expectation": "success",\n'
    '        "train_au_stdev_percentage": 0.37111497802130905,\n'
    '        "train_throughput_mean_samples_per_second": 708.8530913360294,\n'
    '        "train_throughput_stdev_samples_per_second": 4.252409327617455,\n'
    '        "train_io_mean_MB_per_second": 99104.2216774018,\n'
    '        "train_io_stdev_MB_per_second": 594.526174489762\n    },\n'
    '    "num_files_train": 126000,\n    "num_files_eval": 0,\n'
    '    "num_samples_per_file": 1,\n    "end": "2024-08-07T14:38:31.093688"\n}\n')


def _epochs_row(i: int) -> str:
    n = i + 1
    return ("" if i == 0 else ",\n") + (
        f'    "{n}": {{\n        "start": "2024-08-07T14:23:36.497911",\n'
        f'        "block1": {{\n            "start": "2024-08-07T14:23:37.011061",\n'
        f'            "end": "2024-08-07T14:26:36.759055",\n'
        f'            "duration": "{179 + n % 10}.75"\n        }},\n'
        f'        "end": "2024-08-07T14:26:36.769020",\n'
        f'        "duration": "{180 + n % 10}.27"\n    }}')


def _checkpoint() -> BigFile | None:
    """A Model Analyzer checkpoint of a long sweep: the corpus's golden one, one variant's
    measurements repeated at concurrency 1, 2, 3, ... (None without the corpus)."""
    if not CHECKPOINT.exists():
        return None
    doc = json.loads(CHECKPOINT.read_text())
    variants = doc["ResultManager.results"]["_results"]["add_sub"]
    _, measurements = variants["add_sub_config_0"]
    key, measurement = next(iter(measurements.items()))
    variants["add_sub_config_0"][1] = {"__rows__": 0}
    head, tail = json.dumps(doc).split('"__rows__": 0')
    template = json.dumps(measurement).replace('"concurrency-range": 1', '"concurrency-range": {c}')

    def row(i: int) -> str:
        c = i + 1
        text = template.replace("{c}", str(c))
        return ("" if i == 0 else ", ") + json.dumps(
            key.replace("--concurrency-range=1 ", f"--concurrency-range={c} ")) + ": " + text

    return BigFile("model_analyzer_checkpoint", "inference/h100/ma/checkpoints/0.ckpt", head,
                   row, tail)


CHECKPOINT = (PROJECT.parent / "shared" / "corpus" / "model_analyzer"
              / "triton-inference-server__model_analyzer" / "golden-head-single-model" / "0.ckpt")


FORMATS: tuple[BigFile, ...] = (
    BigFile("model_analyzer_csv", "inference/h100/ma/results/metrics-model-inference.csv",
            _MA_HEAD, _ma_row, "\n"),
    BigFile("perf_analyzer_csv", "inference/h100/pa/bert_large_onnx-results.csv",
            _PA_HEAD, _pa_row),
    BigFile("genai_perf_csv", "inference/h100/genai/llama3-triton-tensorrtllm-concurrency8/"
            "profile_export_genai_perf.csv", _GENAI_HEAD, _genai_row),
    BigFile("elbencho_csv", "storage/vast/elbencho.csv", _ELBENCHO_HEAD, _elbencho_row),
    BigFile("tf_cnn_log", "training/h100/resnet50-bs256-8gpu.log", _TF_HEAD, _tf_row,
            _TF_TAIL),
    BigFile("fio_json", "storage/vast/fio-many-jobs.json", _FIO_HEAD, _fio_row, _FIO_TAIL),
    BigFile("fio_terse", "storage/vast/fio-terse.out", "", _terse_row),
    BigFile("gdsio_text", "storage/nvme/gdsio-sweep.log", "", _gdsio_row),
    BigFile("mlperf_storage_summary", "storage/ddn/unet3d-h100/run1/summary.json",
            _SUMMARY_HEAD, _summary_row, _SUMMARY_TAIL),
    BigFile("mlperf_storage_epochs", "storage/ddn/unet3d-h100/run1/per_epoch_stats.json",
            "{\n", _epochs_row, "\n}\n"),
    *filter(None, [_checkpoint()]),
)


def write(spec: BigFile, path: Path, size_bytes: int) -> int:
    """Write about `size_bytes` of the format (whole rows only); returns the bytes written."""
    with open(path, "w", newline="") as out:  # keep CRLF where the format has it
        for chunk in _chunks(spec, size_bytes - len(spec.tail)):
            out.write(chunk)
        out.write(spec.tail)
    return path.stat().st_size


def _chunks(spec: BigFile, budget: int) -> Iterator[str]:
    yield spec.head
    i, size = 0, len(spec.head)
    while True:
        part = [spec.row(j) for j in range(i, i + 1000)]
        i += 1000
        text = "".join(part)
        if size + len(text) > budget:  # finish row by row, so no row is cut
            for row in part:
                yield row
                size += len(row)
                if size >= budget:
                    return
        yield text
        size += len(text)


# ---- the child: one file, one process ------------------------------------------------------

def child(path: str, relpath: str) -> dict[str, object]:
    from ingest.examine import examine
    from parsers.base import SourceFile
    from parsers.registry import data_tables
    from schemas.validate import validate

    tables = {t.key: t for t in data_tables()}
    base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    data = Path(path).read_bytes()
    outcome = examine(SourceFile(relpath, data), max_parse_seconds=None, check_rows=False)
    parsed = time.perf_counter()
    rows, problems = 0, len(outcome.problems)
    for key, frame in outcome.rows.items():
        good, held = validate(tables[key], frame)
        rows += good.height
        problems += len(held)
    done = time.perf_counter()
    return {
        "format": outcome.format, "status": outcome.status, "error": outcome.error,
        "rows": rows, "problems": problems, "parse_s": round(parsed - started, 2),
        "validate_s": round(done - parsed, 2), "total_s": round(done - started, 2),
        "base_rss_mb": round(base_kb / 1024, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def measure(path: Path, relpath: str) -> dict[str, object]:
    proc = subprocess.run([sys.executable, "-m", "bench.big_files", "--child", str(path),
                           relpath], cwd=PROJECT, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S)
    if proc.returncode != 0:
        return {"error": f"child failed: {proc.stderr.strip()[-500:]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- the table -----------------------------------------------------------------------------

_COLUMNS = ("format", "size MB", "rows", "parse s", "valid. s", "total s", "peak RSS MB",
            "RSS/size", "(RSS-base)/size")


def _line(cells: list[str]) -> str:
    widths = (26, 8, 9, 8, 8, 8, 11, 8, 15)
    return "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(
        zip(cells, widths, strict=True)))


def report(spec: BigFile, size_mb: float, result: dict[str, Any]) -> str:
    if "peak_rss_mb" not in result:
        return _line([spec.format, f"{size_mb:.1f}", "-", "-", "-", "-", "-", "-", "-"]) + \
            f"  {result.get('error') or result.get('skipped')}"
    note = ""
    if result["format"] != spec.format or result["status"] != "loaded" or result["problems"]:
        note = f"  !! {result['format']} {result['status']} {result['problems']} problems " \
               f"{result['error'] or ''}"
    peak, base = result["peak_rss_mb"], result["base_rss_mb"]
    return _line([spec.format, f"{size_mb:.1f}", str(result["rows"]), f"{result['parse_s']:.2f}",
                  f"{result['validate_s']:.2f}", f"{result['total_s']:.2f}", f"{peak:.0f}",
                  f"{peak / size_mb:.1f}", f"{(peak - base) / size_mb:.1f}"]) + note


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="20,100", help="file sizes in MB, ascending")
    parser.add_argument("--formats", default="", help="comma-separated; default all")
    parser.add_argument("--budget-mb", type=float, default=6000.0,
                        help="skip a size whose projected peak RSS is above this")
    parser.add_argument("--keep", default=None, help="write the files here and keep them")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    parser.add_argument("--child", nargs=2, metavar=("PATH", "RELPATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0
    sizes = sorted(float(s) for s in args.sizes.split(","))
    wanted = set(filter(None, args.formats.split(",")))
    specs = [s for s in FORMATS if not wanted or s.format in wanted]
    results = []
    print(_line(list(_COLUMNS)))
    with tempfile.TemporaryDirectory(prefix="big_files_") as scratch:
        folder = Path(args.keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for spec in specs:
            grows: tuple[float, float] | None = None  # (base MB, MB per file MB) seen
            for size in sizes:
                path = folder / f"{spec.format}-{size:g}MB{Path(spec.relpath).suffix}"
                projected = grows[0] + grows[1] * size if grows else 0.0
                result: dict[str, object]
                if projected > args.budget_mb:
                    result = {"skipped": f"skipped: projected peak {projected:,.0f} MB > "
                                         f"--budget-mb {args.budget_mb:,.0f}"}
                    actual = size
                else:
                    actual = write(spec, path, int(size * MB)) / MB
                    result = measure(path, spec.relpath)
                    if not args.keep:
                        path.unlink()
                    if isinstance(peak := result.get("peak_rss_mb"), float) and \
                            isinstance(base := result.get("base_rss_mb"), float):
                        grows = (base, (peak - base) / actual)
                print(report(spec, actual, result), flush=True)
                results.append({"format": spec.format, "size_mb": round(actual, 2), **result})
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

