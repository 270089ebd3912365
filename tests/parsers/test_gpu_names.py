"""parsers/gpu_names.py: driver GPU names as the warehouse's GPU labels, on the names and
total_memory values real drivers report (Model Analyzer's MetricsManager.gpus, nvidia-smi)."""

from __future__ import annotations

import pytest

from parsers.gpu_names import gpu_label

GIB = 1024**3


@pytest.mark.parametrize("name, total_bytes, label", [
    # memory from total_memory: 39.59 GiB is the 40 GB part, 79.65 GiB the 80 GB one
    ("NVIDIA A100-SXM4-40GB", 42_505_273_344, "A100-40GB"),
    ("NVIDIA H100 80GB HBM3", 85_520_809_984, "H100-80GB"),
    # ECC and the driver keep back more: an L40S reports 44.99 GiB, a T4 14.75, an A10G 22.2
    ("NVIDIA L40S", 48_305_799_168, "L40S-48GB"),
    ("Tesla T4", 15_843_721_216, "T4-16GB"),
    ("NVIDIA A10G", 23_836_098_560, "A10G-24GB"),
    # the name's 480GB is the superchip's CPU and GPU memory; the GPU has 96 GB
    ("NVIDIA GH200 480GB", 102_005_473_280, "GH200-96GB"),
    ("AMD Instinct MI300X", 192 * GIB, "MI300X-192GB"),
    # no total memory: the size the name states
    ("NVIDIA A100-SXM4-40GB", None, "A100-40GB"),
    ("Tesla V100-SXM2-16GB", None, "V100-16GB"),
])
def test_data_centre_models_become_model_and_memory(name, total_bytes, label):
    assert gpu_label(name, total_bytes) == label


@pytest.mark.parametrize("name, total_bytes", [
    ("NVIDIA TITAN RTX", 25_395_462_144),  # the corpus's Model Analyzer fixtures
    ("NVIDIA GeForce GTX 1060 with Max-Q Design", 6_367_477_760),
    ("NVIDIA RTX A6000", 51_041_271_808),  # four digits: a workstation card
    ("NVIDIA H100 NVL", None),  # which memory: unknown, so no label is made up
])
def test_other_names_stay_as_the_driver_wrote_them(name, total_bytes):
    assert gpu_label(f"  {name} ", total_bytes) == name


def test_no_name_is_no_label():
    assert (gpu_label(None, 80 * GIB), gpu_label(" ", None)) == (None, None)
