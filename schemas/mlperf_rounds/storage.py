"""MLPerf Storage's rules per round: the accelerator-utilisation (AU) threshold a training
run must reach for each workload, and the checkpointing workloads with the process count
the CLOSED division runs them with.

A training workload a round does not list has no threshold in that round: its runs are not
capability (core.storage_measurements says why), never measured against a guessed number.
Chosen per file through `schemas.mlperf_rounds.applied("storage", ROUNDS, round)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# Each workload config of mlcommons/storage sets `metric: au:` (configs/dlio/workload/
# <model>_<accelerator>.yaml; DLIO's train_au_meet_expectation compares the run with it).
_CONFIGS = "mlcommons/storage configs/dlio/workload/<model>_<accelerator>.yaml metric.au"


@dataclass(frozen=True)
class StorageRules:
    """One round's rules. Workload names as the warehouse labels them (lower case)."""

    au_threshold_pct: Mapping[str, float]  # training workload -> AU a run must reach, %
    # checkpointing workload -> MPI processes of a CLOSED run (Submission_guidelines 2.2)
    checkpoint_processes: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({}))
    source: str = _CONFIGS


def _frozen(**values: float) -> Mapping[str, float]:
    return MappingProxyType(dict(values))


_V1_AU = _frozen(unet3d=90.0, resnet50=90.0, cosmoflow=70.0)
# v2.0 (mlcommons/storage v2.0, 2025): the v1.0 training workloads unchanged, and
# checkpointing of Llama 3 models (llama3_8b.yaml ... llama3_1t.yaml)
_CHECKPOINTS = MappingProxyType({"llama3_8b": 8, "llama3_70b": 64, "llama3_405b": 512,
                                 "llama3_1t": 1024})

ROUNDS: Mapping[str, StorageRules] = MappingProxyType({
    "v1.0": StorageRules(_V1_AU, source=f"{_CONFIGS} (v1.0: unet3d_h100, resnet50_h100, "
                                        "cosmoflow_h100)"),
    "v2.0": StorageRules(_V1_AU, _CHECKPOINTS,
                         source=f"{_CONFIGS}; checkpointing: Submission_guidelines.md v2.0 "
                                "section 2.2 (8, 64, 512, 1024 processes)"),
    # v3.0 adds RetinaNet (au 0.85), Flux (0.90) and DLRM (0.70): retinanet_b200.yaml,
    # flux_b200.yaml, dlrm_b200.yaml
    "v3.0": StorageRules(_frozen(**_V1_AU, retinanet=85.0, flux=90.0, dlrm=70.0),
                         _CHECKPOINTS,
                         source=f"{_CONFIGS} (retinanet_b200, flux_b200, dlrm_b200 added); "
                                "checkpointing as in v2.0"),
})
