"""The deployment a Benchmark Report describes, as the serving record's columns.

v0.1 lists hosts in three parallel lists that correlate by index (`scenario.host.type[i]`,
`scenario.host.accelerator[i]`, `scenario.platform.engine[i]`): each entry one engine
instance. v0.2 lists `scenario.stack[]` components; an `inference_engine` component is one
role with `replicas` instances, each using `accelerator.count` GPUs (count x replicas in
all: the v0.2 example's tp 8 on count 8 with 2 replicas says count is per instance).

Roles are replica (or aggregate), prefill and decode: prefill and decode engines side by side
make the deployment disaggregated (decode engines alone serve both phases, as llm-d's
inference-scheduling stack does); each role present counts its workers and GPUs. A size all
engines share is the run's (tensor_parallel, ...); where the roles differ it is NULL, and
every engine stays in extra.engines as written.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from parsers.gpu_names import gpu_label
from parsers.llm_serving.common import RunError, as_dict, as_list, lower_text, text
from parsers.numbers import to_float, to_int

_SIZES = {"tp": "tensor_parallel", "dp": "data_parallel", "pp": "pipeline_parallel",
          "ep": "expert_parallel"}
_DISAGGREGATED = ("prefill", "decode")


@dataclass(frozen=True)
class Engine:
    role: str | None
    replicas: int
    gpus_per_replica: int | None
    gpu_model: str | None
    sizes: dict[str, int | None]  # tp, dp, pp, ep as the report gives them
    engine: str | None
    version: str | None
    model: str | None


def engines_v0_1(scenario: dict) -> list[Engine]:
    host, platform = as_dict(scenario.get("host")), as_dict(scenario.get("platform"))
    roles, accelerators = as_list(host.get("type")), as_list(host.get("accelerator"))
    platforms = as_list(platform.get("engine"))
    model = text(as_dict(scenario.get("model")).get("name"))
    if len(roles) not in (0, len(accelerators)):
        raise RunError(f"scenario.host lists {len(roles)} types for {len(accelerators)} "
                       "accelerators: the lists correlate by index")
    found = []
    for i, accelerator in enumerate(accelerators):
        accelerator = as_dict(accelerator)
        engine = as_dict(platforms[i]) if i < len(platforms) else {}
        found.append(Engine(
            role=lower_text(roles[i]) if roles else None, replicas=1,
            gpus_per_replica=to_int(accelerator.get("count"), f"host.accelerator[{i}].count"),
            gpu_model=_gpu(accelerator.get("model"), accelerator.get("memory")),
            sizes=_sizes(accelerator.get("parallelism"), f"host.accelerator[{i}]"),
            engine=lower_text(engine.get("name")), version=text(engine.get("version")),
            model=model))
    return found


def engines_v0_2(scenario: dict) -> list[Engine]:
    found = []
    for i, component in enumerate(as_list(scenario.get("stack"))):
        standard = as_dict(as_dict(component).get("standardized"))
        if standard.get("kind") != "inference_engine" and "accelerator" not in standard:
            continue  # a router, a gateway: no GPUs of the model's
        accelerator = as_dict(standard.get("accelerator"))
        where = f"scenario.stack[{i}]"
        found.append(Engine(
            role=lower_text(standard.get("role")),
            replicas=to_int(standard.get("replicas"), f"{where}.replicas") or 1,
            gpus_per_replica=to_int(accelerator.get("count"), f"{where}.accelerator.count"),
            gpu_model=_gpu(accelerator.get("model"), None),
            sizes=_sizes(accelerator.get("parallelism"), where),
            engine=lower_text(standard.get("tool")), version=text(standard.get("tool_version")),
            model=text(as_dict(standard.get("model")).get("name"))))
    return found


def record(engines: list[Engine]) -> dict[str, object]:
    """The serving record's deployment columns (and extra.engines)."""
    if not engines:
        return {}
    roles = {e.role for e in engines}
    disaggregated = set(_DISAGGREGATED) <= roles
    values: dict[str, object] = {
        "serving_mode": "disaggregated" if disaggregated else "aggregated",
        "model": _agreed(e.model for e in engines),
        "gpu_model": _agreed(e.gpu_model for e in engines),
        "engine": _agreed(e.engine for e in engines),
        "engine_version": _agreed(e.version for e in engines),
        "replicas": sum(e.replicas for e in engines),
        "gpus": _total(engines),
        **{column: _agreed(e.sizes.get(key) for e in engines) for key, column in _SIZES.items()},
    }
    for role in roles & set(_DISAGGREGATED):
        mine = [e for e in engines if e.role == role]
        values[f"{role}_workers"] = sum(e.replicas for e in mine)
        values[f"{role}_gpus"] = _total(mine)
    return values


def engines_extra(engines: list[Engine]) -> list[dict[str, object]]:
    return [asdict(e) for e in engines]


def _total(engines: list[Engine]) -> int | None:
    counts = [e.gpus_per_replica for e in engines]
    if any(c is None for c in counts):
        return None
    return sum(e.replicas * (e.gpus_per_replica or 0) for e in engines) or None


def _agreed(values: object) -> object:
    found = set(values)  # type: ignore[call-overload]
    return found.pop() if len(found) == 1 else None


def _gpu(model: object, memory_gb: object) -> str | None:
    """'NVIDIA-H100-80GB-HBM3' and v0.1's 'H100' with memory 80 (GB) as 'H100-80GB'."""
    name = text(model)
    memory = to_float(memory_gb, "accelerator.memory")
    return gpu_label(f"{name} {memory:g}GB" if name and memory else name)


def _sizes(parallelism: object, where: str) -> dict[str, int | None]:
    sizes = as_dict(parallelism)
    found = {key: to_int(sizes.get(key), f"{where}.parallelism.{key}") for key in _SIZES}
    # the schema allows 0 for tp and dp; a parallel size below 1 counts no GPUs
    return {key: value if value is None or value >= 1 else None for key, value in found.items()}


