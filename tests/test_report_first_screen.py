"""The report's first screen in a real browser gives the same answer as `sizing plan` for the
same demands: the scenario's total, Triton models and LLM chat added up (Debian's Chromium
through Playwright; skipped without it, as tests/test_report_browser.py)."""

from __future__ import annotations

from pipelines.cli import main
from reports.paths import report_path
from tests.test_report import built  # noqa: F401  (the session fixture: the job, once)
from tests.test_report_browser import VIEWPORT, _open, browser, pytestmark  # noqa: F401

# the sample scenario (samples/generate.py, raw/reference/scenarios/vision-and-chat.yaml)
# without llama3_70b, which `sizing plan` refuses as never measured
DEMANDS = ["resnet50_trt=200", "bert_large_onnx=48", "gpt_20b_trtllm=40",
           "meta-llama/Llama-3.1-8B-Instruct=2000users"]


def test_the_first_screen_shows_the_total_sizing_plan_prints(built, browser, capsys):  # noqa: F811
    warehouse = built
    page = _open(browser, report_path(warehouse).resolve().as_uri(), [], [])
    answer = page.locator("#summary .answer").first
    box = answer.bounding_box()
    assert box is not None and box["y"] + box["height"] < VIEWPORT["height"]
    shown = answer.inner_text()

    argv = ["plan", "--warehouse", str(warehouse), "--gpu-model", "H100-80GB",
            "--gpus-per-server", "8", "--slo", "p95:600", "--chat-slo", "mlperf-interactive",
            "--tokens-per-user-per-min", "300"]
    assert main([*argv, *(a for d in DEMANDS for a in ("--demand", d))]) == 0
    printed = capsys.readouterr().out.splitlines()[0]
    # 12 GPUs for the Triton models (by compute), 10,000 tokens/s / 6,070 per H100 (the
    # GenAI-Perf sweep of llama3_8b, an alias of the model) = 2 for the chat users: 14 GPUs,
    # 2 servers of 8
    assert printed == ("14 GPUs in 2 servers of 8 H100-80GB: 12 GPUs for 3 Triton models "
                       "(p95 <= 600 ms); 2 GPUs for meta-llama/Llama-3.1-8B-Instruct "
                       "(2,000 chat users, mlperf-interactive)")
    assert shown.startswith(f"Scenario vision-and-chat: At least {printed}. Lower bound: "
                            "llama3_70b"), shown
