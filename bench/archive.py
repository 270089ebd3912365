"""A synthetic lab archive in a real lab's proportions, written with the sample generators.

Shares of files: Model Analyzer result sets 30 % (three CSVs each), perf_analyzer 15 %,
GenAI-Perf 10 %, tf_cnn_benchmarks logs 20 %, fio JSON 15 %, gdsio logs 10 %. Each file
differs (model names, load, GPU counts) so nothing is deduplicated by accident.
"""

from __future__ import annotations

import dataclasses
import random
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path

from samples import generate, storage, training

SITES = 20
Writer = Callable[[random.Random, int], dict[str, str]]


def _model(rnd: random.Random, i: int) -> generate.ModelProfile:
    base = rnd.choice(generate.MODELS)
    return dataclasses.replace(base, name=f"{base.name}_v{i}",
                               peak_per_s=base.peak_per_s * rnd.uniform(0.6, 1.4))


def _model_analyzer(rnd: random.Random, i: int) -> dict[str, str]:
    results = generate.model_analyzer_results((_model(rnd, i),),
                                              gpu_uuid=f"GPU-{uuid.UUID(int=rnd.getrandbits(128))}")
    return {f"ma-{i}/{path}": text for path, text in results.items()}


def _perf_analyzer(rnd: random.Random, i: int) -> dict[str, str]:
    model = _model(rnd, i)
    return {f"pa-{i}/{model.name}-results.csv": generate.perf_analyzer_csv(model)}


def _genai_perf(rnd: random.Random, i: int) -> dict[str, str]:
    llm = dataclasses.replace(generate.LLM, name=f"llm_{i % 50}")
    c = rnd.choice((1, 2, 4, 8, 16, 32, 64))
    folder = f"genai-{i}/{llm.name}-triton-tensorrtllm-concurrency{c}"
    if i % 5 == 0:
        return {f"{folder}/profile_export_genai_perf.json": generate.genai_perf_json(llm, c)}
    return {f"{folder}/profile_export_genai_perf.csv": generate.genai_perf_csv(llm, c)}


def _tf_cnn(rnd: random.Random, i: int) -> dict[str, str]:
    gpus = rnd.choice((1, 2, 4, 8))
    text = training.tf_cnn_log(gpus, rnd.uniform(0.8, 1.1))
    return {f"train-{i}/resnet50-{gpus}gpu.log": text}


def _fio(rnd: random.Random, i: int) -> dict[str, str]:
    jobs = rnd.choice(storage.JOBS)
    peak, bend = storage.SEQUENTIAL["read"]
    job = storage.fio_job(f"seqread-{i}", "read", storage.MIB, jobs,
                          storage.saturating(peak * rnd.uniform(0.5, 1.5), bend, jobs))
    return {f"fio-{i}/fio-seqread.json": storage.fio_json((job,))}


def _gdsio(rnd: random.Random, i: int) -> dict[str, str]:
    threads = rnd.choice((1, 2, 4, 8, 16))
    return {f"gdsio-{i}/gdsio.log": storage.gdsio_log("READ", 0, threads,
                                                      rnd.uniform(2.0, 25.0))}


# (writer, share of files, files per call)
MIX: tuple[tuple[Writer, float, int], ...] = (
    (_model_analyzer, 0.30, 3), (_perf_analyzer, 0.15, 1), (_genai_perf, 0.10, 1),
    (_tf_cnn, 0.20, 1), (_fio, 0.15, 1), (_gdsio, 0.10, 1),
)


def write_archive(root: Path, files: int, corpus: Path | None, seed: int = 0) -> int:
    """Write about `files` files under `root` (plus the corpus); returns files written."""
    rnd = random.Random(seed)
    written = 0
    for writer, share, per_call in MIX:
        for i in range(max(1, round(files * share / per_call))):
            if written >= files:
                break
            site = f"site-{i % SITES:02d}"
            for relpath, text in writer(rnd, seed * 1_000_000 + i).items():
                path = root / site / relpath
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                written += 1
    for k in range(SITES):
        (root / f"site-{k:02d}").mkdir(parents=True, exist_ok=True)
        (root / f"site-{k:02d}" / "run.yaml").write_text(
            f"system: lab-{k:02d}\ngpu_model: H100-80GB\ngpu_memory_gb: 80\n"
            f"gpus_per_node: 8\nnodes: 1\nvirtualization: bare-metal\n"
            f"storage_system: store-{k % 4}\nprecision: fp16\n")
    if corpus is not None:
        shutil.copytree(corpus, root / "corpus", dirs_exist_ok=True)
    return written


def write_one_file(root: Path, seed: int) -> Path:
    """Exactly one new result file (a perf_analyzer export), for the incremental run."""
    [(relpath, text)] = _perf_analyzer(random.Random(seed), seed).items()
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
