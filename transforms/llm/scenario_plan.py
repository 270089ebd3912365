"""A capacity scenario's joint plan: the lines of sizing.scenario_plan, pure arithmetic.

One line per part of the answer, each with the rule table it comes from, the arithmetic in
a sentence and the files behind it: the serving GPUs (Triton models; each LLM chat model at
its chosen serving configuration), their total and servers, average power, rack units, and,
when the scenario asks, the read bandwidth its training needs and the all-reduce time of a
training step. A part that cannot be computed is a line without a quantity whose basis says
why, never a missing line.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from transforms.inference.optimal import ceil_div

GPUS, SERVERS, WATTS, RACK_UNITS, GB_PER_S, MS = "GPUs", "servers", "W", "U", "GB/s", "ms"
BYTES_PER_GB = 1e9


@dataclass(frozen=True)
class Line:
    line: str
    quantity: float | None
    unit: str
    source_table: str
    basis: str
    source_files: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None

    def row(self, scenario: str, index: int) -> dict:
        # NULL, NULL when there is no spread; a NULL high beside a low: unbounded above
        spread = (self.low, self.high) not in ((None, None), (self.quantity, self.quantity))
        return {"scenario": scenario, "line_index": index, "line": self.line,
                "quantity": self.quantity, "unit": self.unit,
                "low": self.low if spread else None, "high": self.high if spread else None,
                "source_table": self.source_table, "basis": self.basis,
                "source_files": ";".join(dict.fromkeys(f for f in self.source_files if f))
                or None}


@dataclass(frozen=True)
class Serving:
    """One serving part: its GPUs (low/high when the rule gives a range), its average power
    when the rule gives one (else nameplate x GPUs), or why it has no GPU count."""

    line: str
    gpus: int | None
    source_table: str
    basis: str
    source_files: tuple[str, ...] = ()
    gpus_low: int | None = None
    gpus_high: int | None = None
    power_w: float | None = None
    power_source: str | None = None  # measured | nameplate, as the rule says


@dataclass(frozen=True)
class Server:
    gpu_model: str
    gpus_per_server: int
    rack_units: int | None  # None: DEFAULT rack units assumed
    nameplate_power_w: float | None
    default_rack_units: int
    scenario_file: str | None = None
    gpus_csv_file: str | None = None  # where nameplate_power_w comes from

    @property
    def files(self) -> tuple[str, ...]:
        return (self.scenario_file,) if self.scenario_file else ()


def joint_plan(server: Server, serving: Sequence[Serving]) -> list[Line]:
    """The serving lines, then the total GPUs, servers, average power and rack units."""
    lines = [Line(s.line, s.gpus, GPUS, s.source_table, s.basis, s.source_files,
                  s.gpus_low, s.gpus_high) for s in serving]
    counted = [s for s in serving if s.gpus is not None]
    missing = [s.line for s in serving if s.gpus is None]
    gpus = sum(s.gpus for s in counted if s.gpus is not None)
    low = sum(_or(s.gpus_low, s.gpus) for s in counted)
    high = None if any(s.gpus_high is None and s.gpus_low is not None for s in counted) \
        else sum(_or(s.gpus_high, s.gpus) for s in counted)
    bound = f" (at least: {', '.join(missing)} not planned)" if missing else ""
    tables = "; ".join(dict.fromkeys(s.source_table for s in serving))
    lines.append(Line("total GPUs", gpus, GPUS, tables,
                      " + ".join(f"{s.gpus:,}" for s in counted if s.gpus is not None)
                      + f" = {gpus:,} GPUs" + bound, server.files, low, high))
    per = server.gpus_per_server
    servers = (ceil_div(gpus, per), ceil_div(low, per), None if high is None
               else ceil_div(high, per))
    lines.append(Line("servers", servers[0], SERVERS, tables,
                      f"ceil({gpus:,} GPUs / {per} per server) = {servers[0]:,}" + bound,
                      server.files, servers[1], servers[2]))
    lines.append(_power(server, counted, bound))
    units = server.rack_units or server.default_rack_units
    assumed = "" if server.rack_units else (
        f" ({units}U per server assumed, an 8-GPU HGX server: set server.rack_units)")
    lines.append(Line(
        "rack units", servers[0] * units, RACK_UNITS, tables,
        f"{servers[0]:,} servers x {units}U = {servers[0] * units:,}U{assumed}", server.files,
        None if servers[1] is None else servers[1] * units,
        None if servers[2] is None else servers[2] * units))
    return lines


def _or(value: int | None, default: int | None) -> int:
    return value if value is not None else default or 0


def _power(server: Server, counted: Sequence[Serving], bound: str) -> Line:
    """Average power: each part's measured power where its rule has one, else the GPU's
    nameplate power x its GPUs (an upper bound: GPUs rarely draw it all)."""
    parts: list[tuple[float, float, float | None, str]] = []  # watts, low, high, how
    for s in counted:
        assert s.gpus is not None
        if s.power_w is not None and s.power_source == "measured":
            parts.append((s.power_w, s.power_w, s.power_w, f"{s.power_w:,.0f} W measured"))
            continue
        if server.nameplate_power_w is None:
            return Line("average power", None, WATTS, "raw.reference_gpus",
                        f"not computable: gpus.csv gives no nameplate_power_w for "
                        f"{server.gpu_model}", (*server.files, server.gpus_csv_file or ""))
        w = server.nameplate_power_w
        parts.append((s.gpus * w, _or(s.gpus_low, s.gpus) * w,
                      None if s.gpus_high is None and s.gpus_low is not None
                      else _or(s.gpus_high, s.gpus) * w,
                      f"{s.gpus:,} x {w:,.0f} W nameplate"))
    watts = sum(p[0] for p in parts)
    high = None if any(p[2] is None for p in parts) else sum(p[2] or 0.0 for p in parts)
    measured = [s for s in counted if s.power_source == "measured" and s.power_w is not None]
    nameplate = len(parts) > len(measured)
    files = [f for s in measured for f in s.source_files]
    if nameplate:
        files.append(server.gpus_csv_file or "")
    return Line("average power", watts, WATTS,
                "; ".join(t for t, used in (("sizing.llm_deployment_plan", measured),
                                            ("raw.reference_gpus", nameplate)) if used)
                or "raw.reference_gpus",
                f"{' + '.join(p[3] for p in parts) or '0 GPUs'} = {watts:,.0f} W"
                + (" (nameplate: an upper bound, GPUs rarely draw their full board power)"
                   if nameplate else "") + bound,
                (*server.files, *files), sum(p[1] for p in parts), high)


def training_read_line(model: str, gpus: int, gpu_model: str, rows: Sequence[dict]
                       ) -> Line:
    """The read bandwidth `gpus` GPUs training `model` need: the per-GPU read rate of the
    configuration measured at the GPU count nearest `gpus` (sizing.training_storage_demand;
    bare metal before VMs) x gpus; low and high from the lowest and highest per-GPU rate
    measured at any GPU count."""
    table = "sizing.training_storage_demand"
    mine = [r for r in rows if r["model"].lower() == model.lower()
            and r["gpu_model"] == gpu_model and r["read_bytes_per_s_per_gpu"] is not None]
    what = f"training read bandwidth ({model}, {gpus:,} GPUs)"
    if not mine:
        return Line(what, None, GB_PER_S, table,
                    f"not computable: no training run of {model} on {gpu_model} in {table}")
    best = min(mine, key=lambda r: (abs(math.log(r["gpus"] / gpus)) if r["gpus"] else math.inf,
                                    r["virtualization"] != "bare-metal",
                                    -r["read_bytes_per_s_per_gpu"]))
    per_gpu = best["read_bytes_per_s_per_gpu"]
    rates = [r["read_bytes_per_s_per_gpu"] for r in mine]
    return Line(what, per_gpu * gpus / BYTES_PER_GB, GB_PER_S, table,
                f"{per_gpu / 1e6:,.2f} MB/s per GPU ({best['images_per_sec_per_gpu']:,.4g} "
                f"images/s x {best['avg_sample_bytes'] / 1e3:,.4g} kB per sample, measured "
                f"on {best['gpus']} GPUs, {best['virtualization']}) x {gpus:,} GPUs = "
                f"{per_gpu * gpus / BYTES_PER_GB:,.4g} GB/s; low and high from the per-GPU "
                f"rates measured on {len({r['gpus'] for r in mine})} GPU counts",
                tuple(best["source_files"].split(";")),
                min(rates) * gpus / BYTES_PER_GB, max(rates) * gpus / BYTES_PER_GB)


def all_reduce_line(size_bytes: float, gpus: int, gpu_model: str, rules: Sequence[dict]
                    ) -> Line:
    """The time to all-reduce `size_bytes` over `gpus` GPUs: size x 2(n-1)/n / the plateau
    bus bandwidth of the all_reduce rule row measured on that many GPUs of the scenario's GPU
    model (sizing.collective_bandwidth_rule), no overlap with compute."""
    table = "sizing.collective_bandwidth_rule"
    what = f"all-reduce per step ({size_bytes / 1e6:,.4g} MB, {gpus:,} GPUs)"
    mine = [r for r in rules if r["operation"] == "all_reduce" and r["gpus"] == gpus
            and _same_gpu(gpu_model, r["gpu_model"]) and r["plateau_busbw_bytes_per_s"]]
    if gpus < 2:
        return Line(what, 0.0, MS, table, "one GPU all-reduces nothing")
    if not mine:
        return Line(what, None, MS, table,
                    f"not computable: no all_reduce measured on {gpus:,} GPUs of {gpu_model} "
                    f"in {table}")
    best = max(mine, key=lambda r: r["plateau_busbw_bytes_per_s"])
    busbw = best["plateau_busbw_bytes_per_s"]
    factor = 2 * (gpus - 1) / gpus
    ms = size_bytes * factor / busbw * 1e3
    network = f", {best['network']}" if best.get("network") else ""
    return Line(what, ms, MS, table,
                f"{size_bytes:,.0f} bytes x 2({gpus}-1)/{gpus} / {busbw / 1e9:,.4g} GB/s "
                f"plateau bus bandwidth ({best['gpu_model']}, {best['nodes']} nodes{network})"
                f" x 1000 = {ms:,.4g} ms, no overlap with compute",
                tuple(best["source_files"].split(";")))


def _same_gpu(scenario_gpu: str, measured_gpu: str | None) -> bool:
    """'H100-80GB' names 'NVIDIA H100 80GB HBM3' (nccl-tests prints the device's name):
    letters and digits of the one found in the other, case aside."""
    if measured_gpu is None:
        return False
    def key(s: str) -> str:
        return "".join(ch for ch in s.lower() if ch.isalnum())
    return key(scenario_gpu) in key(measured_gpu) or key(measured_gpu) in key(scenario_gpu)
