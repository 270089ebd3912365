"""'did you mean ...?' for a name a person typed: one policy for every message that
refuses or doubts a name (a model, a GPU, a rule family, a run.yaml key)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence


def did_you_mean(name: str, known: Sequence[str], cutoff: float = 0.6) -> str:
    """' (did you mean 'x'?)' naming the known name closest to `name` (the same name in
    another case first), else ''. `cutoff`: how alike they must be (difflib's ratio; 0.6
    for a name refused anyway, higher where an unknown name may well be meant)."""
    folded = {k.lower(): k for k in known}
    match = folded.get(name.lower()) or next(
        iter(difflib.get_close_matches(name, known, 1, cutoff)), None)
    return f" (did you mean {match!r}?)" if match and match != name else ""
