"""What an IO500 phase name and a submission's path say: the phase's benchmark, direction
and access, and the storage system the submission-data layout names
(<institution>/<system>/<filesystem>/<list>/submission-<n>/..., as IO500/submission-data
files them)."""

from __future__ import annotations

import re

_SUBMISSION = re.compile(r"(?:^|/)(?P<system>[^/]+/[^/]+/[^/]+)/(?P<list>[^/]+)/"
                         r"(?P<submission>submission-\d+)/")
_PHASE_FILE = re.compile(r"^(ior[-_](?:easy|hard|rnd4K[-_]easy|rnd1MB[-_]easy)[-_]"
                         r"(?:write|read))\.(?:txt|csv)$")


def path_labels(relpath: str) -> dict[str, str | None]:
    """path_storage_system and path_submission of a file in a submission layout."""
    found = _SUBMISSION.search(relpath)
    if found is None:
        return {"path_storage_system": None, "path_submission": None}
    return {"path_storage_system": found["system"],
            "path_submission": f"{found['list']}/{found['submission']}"}


def canonical(name: str) -> str:
    """The C app's hyphenated name of a phase (the 2019 script wrote underscores)."""
    return name.replace("_", "-")


def phase_of_file(name: str) -> str | None:
    """The IOR phase a file's name names (ior-easy-write.txt, ior_hard_read.txt), or None."""
    found = _PHASE_FILE.match(name)
    return canonical(found.group(1)) if found else None


def benchmark(phase: str) -> str | None:
    """ior, mdtest or find; None for a name IO500 does not use."""
    head = phase.split("-", 1)[0]
    return head if head in ("ior", "mdtest", "find") else None


def direction(phase: str) -> str | None:
    """read or write for an ior phase; None for metadata phases, which move no data."""
    if benchmark(phase) != "ior":
        return None
    return "write" if phase.endswith("-write") else "read" if phase.endswith("-read") else None


def access(phase: str) -> str | None:
    """IOR's own label: random for the rnd phases (IOR -z), sequential offsets otherwise
    (ior-hard's 47008-byte strided writes to one shared file are sequential to IOR too)."""
    if benchmark(phase) != "ior":
        return None
    return "random" if "-rnd" in phase else "sequential"


CONFIG_REASON = ("not a result: IO500 configuration (config.ini: [global], [ior-easy], "
                 "[mdtest-easy] ... settings of the run); its results are result.txt and "
                 "result_summary.txt beside it")
_CONFIG_SECTIONS = re.compile(r"(?m)^\[(?:ior-easy|mdtest-easy|find)\]\s*$")


def not_a_result(head: str) -> str | None:
    """An IO500 config.ini (its [global] section and phase sections), by content."""
    starts = head.lstrip().startswith("[global]")
    return CONFIG_REASON if starts and _CONFIG_SECTIONS.search(head) else None
