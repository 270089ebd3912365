"""GPU telemetry on the corpus (gpu_telemetry/PROVENANCE.md): InferenceX's amd-smi energy
readings at a run's start and end on 8 x MI355X and their identity dump, and the
gpu_glasses nvidia-smi log (ISO times with +08:00, a constant `index`, a truncated last
sample). Values are read by hand from the files."""

from __future__ import annotations

from datetime import datetime

import polars as pl
import pytest

from parsers.gpu_telemetry.amd_smi import AmdSmiEnergyCsv, AmdSmiStaticJson
from parsers.gpu_telemetry.nvidia_smi import NvidiaSmiCsv
from schemas.gpu_telemetry import GPU_IDENTITIES, GPU_TELEMETRY_SAMPLES
from tests.conftest import corpus_file, only
from transforms.llm.energy_windows import energy_windows

INFX = "gpu_telemetry/SemiAnalysisAI__InferenceX/"
GLASSES = "gpu_telemetry/xypp3__gpu_glasses/nvidia_smi.csv"
SAMPLES, IDENTITIES = GPU_TELEMETRY_SAMPLES.key, GPU_IDENTITIES.key


def rows(parser, relpath: str, table: str = SAMPLES) -> pl.DataFrame:
    result = parser.parse(corpus_file(relpath))
    assert result.problems == []
    return result.tables[table]


def test_gpu_glasses_log_one_row_per_gpu_per_sample():
    df = rows(NvidiaSmiCsv(), GLASSES)
    assert df.height == 43  # 5 full samples of 8 GPUs and a last one of 3
    first = only(df, source_line=2)
    assert first["gpu_index"] == 0
    assert first["sampled_at_text"] == "2025-09-08T17:26:50+08:00"
    assert first["sampled_at"] == datetime(2025, 9, 8, 17, 26, 50)
    assert first["utc_offset_min"] == 480
    assert (first["power_w"], first["temperature_c"]) == (74.01, 33.0)
    assert (first["memory_used_mib"], first["memory_total_mib"]) == (4.0, 81559.0)
    assert first["energy_j"] is None and first["gpu_utilization_pct"] is None
    # the wrapper's `gpu` column numbers the GPUs; its `index` is 0 on every row
    assert sorted(df["gpu_index"].unique().to_list()) == list(range(8))
    last = df.filter(pl.col("sampled_at") == datetime(2025, 9, 8, 17, 26, 58))
    assert last["gpu_index"].to_list() == [0, 1, 2]
    assert only(df, source_line=44)["power_w"] == 72.96


def test_energy_readings_at_start_and_end():
    start = rows(AmdSmiEnergyCsv(), INFX + "gpu_metrics_energy_start.csv")
    end = rows(AmdSmiEnergyCsv(), INFX + "gpu_metrics_energy_end.csv")
    assert start.height == end.height == 8  # the blank last line is no reading
    assert set(start["sample_point"]) == {"start"} and set(end["sample_point"]) == {"end"}
    assert only(start, gpu_index=0)["energy_j"] == 416143212.215
    assert only(end, gpu_index=0)["energy_j"] == 339360563.211
    assert only(end, gpu_index=4)["energy_j"] == 327614022.83
    assert only(start, gpu_index=7)["energy_unit_source"].startswith("assumed J")


def test_end_below_start_on_every_gpu_gives_no_energy():
    frames = [rows(AmdSmiEnergyCsv(), INFX + f"gpu_metrics_energy_{p}.csv").with_columns(
        source_file=pl.lit(INFX + f"gpu_metrics_energy_{p}.csv")) for p in ("start", "end")]
    windows = energy_windows(pl.concat(frames))
    assert windows.height == 8
    assert windows["energy_j"].null_count() == 8
    gpu0 = only(windows, gpu_index=0)
    assert (gpu0["start_energy_j"], gpu0["end_energy_j"]) == (416143212.215, 339360563.211)
    assert gpu0["folder"] == INFX.rstrip("/")
    assert "accumulator was reset" in gpu0["not_computable_reason"]


def test_identity_dump_names_eight_mi355x():
    df = rows(AmdSmiStaticJson(), INFX + "gpu_metrics_identity.json", IDENTITIES)
    assert df["gpu_index"].to_list() == list(range(8))
    assert set(df["gpu_name"]) == {"AMD Instinct MI355X"}
    gpu7 = only(df, gpu_index=7)
    assert (gpu7["gpu_bus_id"], gpu7["asic_serial"]) == ("0000:f5:00.0", "0x2B6A776B76E7E306")
    assert (gpu7["compute_units"], gpu7["target_graphics_version"]) == (256, "gfx950")
    assert (gpu7["vram_total_mib"], gpu7["power_limit_w"]) == (294896.0, 1400.0)
    assert gpu7["product_name"] == "AMD Instinct MI355 OAM"
    assert gpu7["driver_version"] == "6.16.6"


@pytest.mark.parametrize(("parser", "relpath", "table"), [
    (NvidiaSmiCsv(), GLASSES, GPU_TELEMETRY_SAMPLES),
    (AmdSmiEnergyCsv(), INFX + "gpu_metrics_energy_end.csv", GPU_TELEMETRY_SAMPLES),
    (AmdSmiStaticJson(), INFX + "gpu_metrics_identity.json", GPU_IDENTITIES)])
def test_rows_pass_their_schema(parser, relpath, table):
    df = rows(parser, relpath, table.key)
    lineage = df.with_columns(source_file=pl.lit("x"), file_sha256=pl.lit("0" * 64))
    table.pandera_schema().validate(table.conform(lineage))
