"""raw/reference/gpus.csv and raw/reference/gpu_prices.csv of the sample.

Nameplate power is the board power of the vendors' data sheets (H100 SXM 700 W, A100 SXM
400 W, L40S 350 W). The prices are EXAMPLES, there to show the format and give the plan
numbers of the right order of magnitude: users replace them with their own quotes.
"""

from __future__ import annotations

AS_OF = "2026-11-29"
# (GPU, nameplate power W)
GPUS = (("H100-80GB", 80, 700), ("A100-40GB", 40, 400), ("L40S-48GB", 48, 350))
_EXAMPLE = "example, replace with your quote"
# (GPU, provider class, USD per GPU-hour, source), the default class of each GPU first
PRICES = (
    ("H100-80GB", "hyperscaler-on-demand", 6.88,
     f"{_EXAMPLE}: 8-GPU cloud VM list price / 8"),
    ("H100-80GB", "neocloud-on-demand", 2.49,
     f"{_EXAMPLE}: GPU-cloud list price"),
    ("H100-80GB", "owned-3y-amortised", 1.40,
     f"{_EXAMPLE}: server share over 26,280 h + hosting"),
    ("A100-80GB", "hyperscaler-on-demand", 5.12,
     f"{_EXAMPLE}: 8-GPU cloud VM list price / 8"),
    ("A100-80GB", "neocloud-on-demand", 1.29,
     f"{_EXAMPLE}: GPU-cloud list price"),
    ("A100-40GB", "hyperscaler-on-demand", 4.10,
     f"{_EXAMPLE}: 8-GPU cloud VM list price / 8"),
    ("L40S-48GB", "hyperscaler-on-demand", 2.23,
     f"{_EXAMPLE}: cloud VM list price per GPU"),
)


def gpus_csv() -> str:
    return "gpu_model,memory_gb,nameplate_power_w\n" + "".join(
        f"{gpu},{memory},{watts}\n" for gpu, memory, watts in GPUS)


def gpu_prices_csv() -> str:
    return "gpu_model,provider_class,usd_per_gpu_hour,source,as_of\n" + "".join(
        f'{gpu},{cls},{price:.2f},"{source}",{AS_OF}\n' for gpu, cls, price, source in PRICES)
