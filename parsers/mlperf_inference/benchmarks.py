"""MLPerf Inference benchmark names: one spelling per benchmark, the accuracy target apart.

Submitters and rounds spell the same benchmark differently (`llama3.1-405b`,
`llama3_1-405b`); the `-99` / `-99.9` suffix is the accuracy target (% of the FP32
reference), not part of the model's name.
"""

from __future__ import annotations

import re

# canonical name -> other spellings seen (rounds v1.0 to v5.1, both suites' folder names)
KNOWN: dict[str, tuple[str, ...]] = {
    "resnet50": ("resnet", "resnet50-v1.5"),
    "retinanet": ("ssd-retinanet",),
    "ssd-resnet34": (),
    "ssd-mobilenet": (),
    "rnnt": (),
    "bert": ("bert-large",),
    "gptj": ("gpt-j", "gptj-6b"),
    "llama2-70b": (),
    "llama2-70b-interactive": (),
    "llama3.1-405b": ("llama31-405b",),
    "llama3.1-405b-interactive": (),
    "llama3.1-8b": ("llama31-8b",),
    "llama3.1-8b-edge": (),
    "mixtral-8x7b": (),
    "deepseek-r1": (),
    "stable-diffusion-xl": ("sdxl",),
    "dlrm": (),
    "dlrm-v2": ("dlrmv2", "dlrm-dcnv2"),
    "3d-unet": ("3dunet", "unet3d"),
    "rgat": (),
    "whisper": (),
    "pointpainting": (),
}
_ACCURACY = re.compile(r"^(?P<name>.+?)[-_](?P<target>99(?:[._]9)?)$")


def _key(name: str) -> str:
    """Spelling-insensitive key: case, '.', '_' and '-' dropped."""
    return re.sub(r"[._\-\s]", "", name.lower())


_BY_KEY = {_key(alias): name for name, aliases in KNOWN.items() for alias in (name, *aliases)}


def normalise_benchmark(written: str) -> tuple[str, float | None, bool]:
    """(canonical name, accuracy target %, known?): 'llama3_1-405b' -> ('llama3.1-405b',
    None, True); 'llama2-70b-99.9' -> ('llama2-70b', 99.9, True); an unknown name comes back
    lower case, as written, with known False."""
    name = written.strip()
    target: float | None = None
    if found := _ACCURACY.match(name):
        name, target = found.group("name"), float(found.group("target").replace("_", "."))
    canonical = _BY_KEY.get(_key(name))
    return (canonical or name.lower(), target, canonical is not None)
