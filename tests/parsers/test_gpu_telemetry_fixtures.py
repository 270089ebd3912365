"""GPU telemetry on fixtures written here: nvidia-smi's CSV with units and without, the
InferenceX query, newer drivers' power fields, a wrapper's ISO-time log, values the GPU
cannot give, a unit that is not the field's; amd-smi energy readings of one run folder and
its identity dump; and the energy of a window, through a counter wrap and across a reset."""

from __future__ import annotations

from datetime import datetime

import polars as pl
import pytest

from parsers.gpu_telemetry.amd_smi import AmdSmiEnergyCsv, AmdSmiStaticJson
from parsers.gpu_telemetry.nvidia_smi import NvidiaSmiCsv
from schemas.gpu_telemetry import GPU_IDENTITIES, GPU_TELEMETRY_SAMPLES
from tests.conftest import only
from tests.fixtures import fixture
from transforms.llm.energy_windows import COUNTER_WRAP_J, energy_windows, window_energy

GT = "gpu_telemetry/"
SAMPLES = GPU_TELEMETRY_SAMPLES.key


def samples(relpath: str, parser=None) -> pl.DataFrame:
    result = (parser or NvidiaSmiCsv()).parse(fixture(GT + relpath))
    return result.tables[SAMPLES]


def test_units_in_header_and_values_and_missing_values_as_null():
    df = samples("nvidia_smi_units.csv")
    first = only(df, source_line=2)
    assert first["sampled_at"] == datetime(2025, 1, 2, 3, 4, 5, 500000)
    assert first["utc_offset_min"] is None  # nvidia-smi writes no zone
    assert first["gpu_name"] == "NVIDIA H100 80GB HBM3"
    assert first["gpu_uuid"] == "GPU-aaaa0000-0000-0000-0000-000000000000"
    assert first["gpu_bus_id"] == "00000000:18:00.0"
    assert (first["power_w"], first["energy_j"]) == (350.0, 1000.0)  # 1,000,000 mJ
    assert first["energy_unit_source"] == "header [mJ]"
    assert (first["gpu_utilization_pct"], first["memory_used_mib"]) == (95.0, 40000.0)
    assert first["temperature_c"] == 60.0
    na = only(df, source_line=3)  # [N/A] and [Not Supported]
    assert (na["power_w"], na["energy_j"], na["temperature_c"]) == (None, None, None)
    assert na["gpu_utilization_pct"] == 90.0


def test_nounits_and_inferencex_query():
    bare = samples("nvidia_smi_nounits.csv")
    assert only(bare, gpu_index=0)["power_w"] == 350.5
    assert only(bare, gpu_index=0)["memory_used_mib"] == 1024.0
    assert only(bare, gpu_index=1)["power_w"] is None
    assert only(bare, gpu_index=1)["gpu_utilization_pct"] is None
    query = only(samples("nvidia_smi_inferencex_query.csv"), gpu_index=1)
    assert (query["power_w"], query["temperature_c"]) == (650.0, 68.0)
    assert (query["sm_clock_mhz"], query["memory_clock_mhz"]) == (1755.0, 2619.0)
    assert (query["gpu_utilization_pct"], query["memory_utilization_pct"]) == (99.0, 35.0)


def test_power_average_stands_in_for_power_draw():
    row = only(samples("nvidia_smi_power_average.csv"), gpu_index=0)
    assert (row["power_w"], row["power_instant_w"]) == (500.0, 520.0)


def test_a_unit_other_than_the_fields_holds_the_row_back():
    result = NvidiaSmiCsv().parse(fixture(GT + "nvidia_smi_wrong_unit.csv"))
    assert result.tables[SAMPLES]["gpu_index"].to_list() == [0]
    (problem,) = result.problems
    assert problem.reason == "power.draw: unit 'kW', expected 'W'"


def test_wrapper_log_with_offset_and_its_own_gpu_column():
    df = samples("gpu_glasses_wrapper.csv")
    assert df["gpu_index"].to_list() == [0, 1, 0]
    row = only(df, source_line=3)
    assert (row["utc_offset_min"], row["power_w"], row["memory_used_mib"]) == (480, 72.5, 8.0)
    assert row["sampled_at"] == datetime(2025, 1, 2, 3, 4, 5)


def test_noheader_log_is_not_claimed():
    assert not NvidiaSmiCsv().sniff(fixture(GT + "nvidia_smi_noheader.csv"))


def test_energy_readings_and_gaps():
    start = samples("amd_run/gpu_metrics_energy_start.csv", AmdSmiEnergyCsv())
    assert start["energy_j"].to_list() == [1000.5, 2000.25]
    assert set(start["sample_point"]) == {"start"}
    result = AmdSmiEnergyCsv().parse(fixture(GT + "amd_smi_energy_gaps.csv"))
    gaps = result.tables[SAMPLES]
    assert gaps["energy_j"].to_list() == [None]  # N/A
    assert gaps["sample_point"].to_list() == [None]  # the name says neither start nor end
    assert [p.location for p in result.problems] == ["line 3"]


def test_window_energy_per_gpu_of_a_run_folder():
    frames = [samples(f"amd_run/gpu_metrics_energy_{p}.csv", AmdSmiEnergyCsv()).with_columns(
        source_file=pl.lit(f"{GT}amd_run/gpu_metrics_energy_{p}.csv")) for p in ("start", "end")]
    windows = energy_windows(pl.concat(frames))
    gpu0, gpu1 = only(windows, gpu_index=0), only(windows, gpu_index=1)
    assert gpu0["folder"] == "gpu_telemetry/amd_run"
    assert (gpu0["energy_j"], gpu0["wrapped"], gpu0["not_computable_reason"]) == \
        (500.0, False, None)  # 1500.5 - 1000.5
    assert gpu1["energy_j"] is None and not gpu1["wrapped"]
    assert gpu1["not_computable_reason"].startswith("end reading 1000.000 J is below the "
                                                    "start 2000.250 J")


@pytest.mark.parametrize(("start", "end", "expected"), [
    (100.0, 350.0, (250.0, False, None)),
    (COUNTER_WRAP_J - 100.0, 50.0, (150.0, True, None)),  # through the wrap point
    (None, 50.0, (None, False, "no start reading for this GPU")),
    (10.0, None, (None, False, "no end reading for this GPU")),
])
def test_window_energy(start, end, expected):
    energy, wrapped, reason = window_energy(start, end)
    assert (energy if energy is None else pytest.approx(energy, abs=0.1), wrapped, reason) \
        == expected


def test_identity_dump_with_unavailable_values():
    result = AmdSmiStaticJson().parse(fixture(GT + "amd_run/gpu_metrics_identity.json"))
    df = result.tables[GPU_IDENTITIES.key]
    gpu0, gpu1 = only(df, gpu_index=0), only(df, gpu_index=1)
    assert (gpu0["gpu_name"], gpu0["gpu_bus_id"]) == ("AMD Instinct MI300X", "0000:0c:00.0")
    assert (gpu0["vram_total_mib"], gpu0["power_limit_w"]) == (196592.0, 700.0)
    assert gpu0["compute_units"] == 304
    # "N/A": NULL; the socket limit missing, the maximum limit stands in
    assert (gpu1["asic_serial"], gpu1["product_name"], gpu1["vram_total_mib"]) == \
        (None, None, None)
    assert gpu1["power_limit_w"] == 750.0
    (problem,) = result.problems
    assert problem.location == "gpu_data[2]"
    assert "market_name" in problem.reason
