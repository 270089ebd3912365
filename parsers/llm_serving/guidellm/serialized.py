"""GuideLLM's JSON and YAML reports (`--output-path benchmarks.json|.yaml`): the report's
model dumped whole, `json.dumps` on one line or `yaml.dump` with its keys sorted."""

from __future__ import annotations

import re

from parsers import safe_yaml
from parsers.base import FormatError, Parsed, SourceFile
from parsers.llm_serving.common import load_json
from parsers.llm_serving.guidellm.report import runs_of_report
from schemas.llm_serving import TABLES
from schemas.spec import Table

_BENCHMARK = "generative_benchmark"
_YAML_TOP = re.compile(r"^(benchmarks|metadata|args):\s*$", re.MULTILINE)
# A report keeps per-request samples (prompts and outputs included): far larger than the
# hand-written YAML safe_yaml's defaults are sized for. Its limits still bound the parse.
_YAML_LIMITS = {"max_bytes": 256 * 1024 * 1024, "max_nodes": 20_000_000,
                "max_scalar_chars": 10_000_000}


class GuidellmReportJson:
    format = "guidellm_report_json"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096).lstrip()
        if not head.startswith("{"):
            return False
        return '"guidellm_version"' in head or (
            '"benchmarks"' in head and f'"{_BENCHMARK}"' in head)

    def parse(self, src: SourceFile) -> Parsed:
        return runs_of_report(load_json(src), "json")


class GuidellmReportYaml:
    format = "guidellm_report_yaml"
    version = 1
    tables: tuple[Table, ...] = TABLES

    def sniff(self, src: SourceFile) -> bool:
        head = src.head(4096)
        return not head.lstrip().startswith(("{", "[")) and bool(_YAML_TOP.search(head)) \
            and src.might_contain(f"type_: {_BENCHMARK}")

    def parse(self, src: SourceFile) -> Parsed:
        try:
            report = safe_yaml.load(src.data, **_YAML_LIMITS)
        except safe_yaml.YamlInputError as exc:
            raise FormatError(str(exc)) from None
        return runs_of_report(report, "yaml")
