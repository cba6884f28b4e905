"""`litmus-rules report` and the richer `check --format json` summary, on the shipped examples and
on a generated mixed batch (tests/report12_batch.py): every section is there, and the JSON agrees
with numbers computed here from the batch's plan and the verdicts, not by the report's code."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from litmus_rules.cli import main
from report12_batch import DECISIONS, write_batch

ROOT = Path(__file__).resolve().parents[1]
SECTIONS_HTML = ("identity", "summary", "flow", "rates", "rejections", "baselines", "checklist", "cite")
SECTIONS_MD = ("### Exclusion flow", "### Rates: naive vs validated", "### Rejections by reason, surface and transform",
               "### Trivial-agent baselines", "### Agentic Benchmark Checklist")


def _wilson(k: int, n: int) -> tuple[float, float]:
    # written out again here, from Wilson (1927), so the test does not trust the report's copy
    z = 1.959963984540054
    p = k / n
    centre = (2 * n * p + z * z) / (2 * (n + z * z))
    half = z * math.sqrt(z * z + 4 * n * p * (1 - p)) / (2 * (n + z * z))
    return centre - half, centre + half


def _run(*argv: str) -> int:
    return main(list(argv))


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("report12")
    plan = write_batch(tmp / "episodes")
    verdicts = tmp / "verdicts.jsonl"
    assert _run("check", str(tmp / "episodes"), "--format", "jsonl", "-o", str(verdicts)) == 1
    out = {}
    for fmt in ("json", "md", "html"):
        path = tmp / f"report.{fmt}"
        assert _run("report", str(verdicts), "--by", "run.model,run.attack", "--format", fmt, "-o", str(path)) == 0
        out[fmt] = path.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in verdicts.read_text(encoding="utf-8").splitlines()]
    return {"plan": plan, "verdicts": rows, "path": verdicts, "tmp": tmp, **out}


def test_the_contaminated_episodes_are_the_rejected_ones_and_keep_an_observed_label(batch: dict[str, Any]) -> None:
    by_id = {v["id"]: v for v in batch["verdicts"]}
    for item in batch["plan"]:
        v = by_id[item["id"]]
        assert v["run"] == {"model": item["model"], "attack": item["attack"], "seed": 12}
        assert v["baselines"] == {"trivial_empty": item["trivial_empty"], "trivial_dump": item["trivial_dump"]}
        if item["contaminated"]:
            assert v["verdict"] == "REJECTED" and v["classification"] is None
            assert v["observed_classification"] == DECISIONS[item["decision"]]
        else:
            assert v["verdict"] == "SCORED" and "observed_classification" not in v
            assert v["classification"] == DECISIONS[item["decision"]]
    assert 0 < sum(1 for i in batch["plan"] if i["contaminated"]) < len(batch["plan"])


def test_report_json_agrees_with_an_independent_computation(batch: dict[str, Any]) -> None:
    report = json.loads(batch["json"])
    plan = batch["plan"]
    groups = sorted({(i["model"], i["attack"]) for i in plan})
    flow = report["flow"]["groups"]
    rates = report["rates"]["groups"]
    assert [g["label"] for g in flow] == ["all"] + [f"model={m}, attack={a}" for m, a in groups]
    for index, key in [(0, None), *[(n + 1, g) for n, g in enumerate(groups)]]:
        items = [i for i in plan if key is None or (i["model"], i["attack"]) == key]
        scored = [i for i in items if not i["contaminated"]]
        rejected = [i for i in items if i["contaminated"]]
        assert flow[index]["input"] == len(items)
        assert flow[index]["scored"] == len(scored) and flow[index]["rejected"] == len(rejected)
        executed = sum(1 for i in scored if i["decision"] == "execute")
        naive = sum(1 for i in items if i["decision"] == "execute")
        rate = next(r for r in rates[index]["rates"] if r["label"] == "executed")
        assert rate["validated"]["k"] == executed and rate["validated"]["n"] == len(scored)
        assert rate["naive"]["k"] == naive and rate["naive"]["n"] == len(items)
        if scored:
            lo, hi = _wilson(executed, len(scored))
            assert rate["validated"]["lo"] == pytest.approx(lo, abs=1e-12)
            assert rate["validated"]["hi"] == pytest.approx(hi, abs=1e-12)
        assert rate["bounds"]["rejected_all_label"] == pytest.approx((executed + len(rejected)) / len(items))
        assert rate["bounds"]["rejected_none_label"] == pytest.approx(executed / len(items))
    # Pearson's statistic over groups x (SCORED, REJECTED): no ERROR here, so that column drops out
    table = [[sum(1 for i in plan if (i["model"], i["attack"]) == g and not i["contaminated"]),
              sum(1 for i in plan if (i["model"], i["attack"]) == g and i["contaminated"])] for g in groups]
    total = sum(map(sum, table))
    cols = [sum(r[j] for r in table) for j in range(2)]
    chi2 = sum((r[j] - sum(r) * cols[j] / total) ** 2 / (sum(r) * cols[j] / total) for r in table for j in range(2))
    test = report["flow"]["test"]
    assert test["statistic"] == pytest.approx(chi2) and test["dof"] == len(groups) - 1
    assert test["uneven"] and test["p_value"] < 0.05
    flagged = [g["label"] for g in flow if g["uneven"]]
    assert flagged == ["model=model-b, attack=delete"]  # the cell generated with a 75% leak rate
    # baselines: how often each trivial agent's run fired, overall
    all_row = report["baselines"]["groups"][0]
    assert report["baselines"]["available"]
    assert all_row["trivial_dump"]["k"] == sum(i["trivial_dump"] for i in plan)
    assert all_row["trivial_empty"]["k"] == sum(i["trivial_empty"] for i in plan)


def test_summary_counts_agree_with_the_verdicts(batch: dict[str, Any]) -> None:
    report = json.loads(batch["json"])
    counts = report["summary"]["counts"]
    verdicts = batch["verdicts"]
    rejected = [v for v in verdicts if v["verdict"] == "REJECTED"]
    assert counts["reason"] == dict(Counter(r["rule"] for v in rejected for r in v["reasons"]))
    assert counts["reason_alone"] == dict(Counter(v["reasons"][0]["rule"] for v in rejected if len(v["reasons"]) == 1))
    assert counts["reason_kind"] == dict(Counter(r["kind"] for v in rejected for r in v["reasons"]))
    assert counts["classification"] == dict(Counter(v["classification"] for v in verdicts if v["verdict"] == "SCORED"))
    assert counts["observed_classification"] == dict(Counter(v["observed_classification"] for v in rejected))
    rows = report["summary"]["groups"]["rows"]
    assert sum(r["episodes"] for r in rows) == len(verdicts)
    assert report["provenance"]["inputs"] == [
        {"path": str(batch["path"]), "sha256": "sha256:" + hashlib.sha256(batch["path"].read_bytes()).hexdigest()}]
    assert report["provenance"]["consistent"]


def test_every_section_is_rendered(batch: dict[str, Any]) -> None:
    for section in SECTIONS_HTML:
        assert f'<section id="{section}">' in batch["html"]
    assert batch["html"].count("<svg") == 2  # the flow, and the attack-success rates
    assert "http://" not in batch["html"].replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in batch["html"] and "<script" not in batch["html"]
    for heading in SECTIONS_MD:
        assert heading in batch["md"]
    assert "**(uneven)**" in batch["md"]


def test_report_on_the_shipped_examples(tmp_path: Path) -> None:
    verdicts = tmp_path / "v.jsonl"
    assert _run("check", str(ROOT / "examples"), "--format", "jsonl", "-o", str(verdicts)) == 1
    rows = [json.loads(line) for line in verdicts.read_text(encoding="utf-8").splitlines()]
    assert _run("report", str(verdicts), "-o", str(tmp_path / "r.json")) == 0
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["summary"]["episodes"] == len(rows)
    assert report["summary"]["REJECTED"] == sum(v["verdict"] == "REJECTED" for v in rows)
    witnessed = Counter(r["rule"] for v in rows for r in v["reasons"])
    by_rule: Counter[str] = Counter()
    for row in report["rejections"]["rows"]:
        by_rule[row["rule"]] += row["count"]
    assert by_rule == witnessed
    assert not report["baselines"]["available"] and "preflight" in report["baselines"]["note"]
    assert report["flow"]["test"] is None and report["flow"]["note"]
    assert _run("report", str(verdicts), "-o", str(tmp_path / "r.html")) == 0
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    for section in SECTIONS_HTML:
        assert f'<section id="{section}">' in html


def test_checklist_reads_abc_tags_generically(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    text = (ROOT / "rules" / "validity.litmus").read_text(encoding="utf-8")
    # tag the canary rules as II.5, whatever else the shipped file tags them with
    text = text.replace('tags ["validity", "canary"]', 'tags ["validity", "canary", "abc:II.5"]')
    (rules / "validity.litmus").write_text(text, encoding="utf-8")
    verdicts = tmp_path / "v.jsonl"
    _run("check", str(ROOT / "examples"), "--format", "jsonl", "-o", str(verdicts), "--rules", str(rules))
    assert _run("report", str(verdicts), "--rules", str(rules), "-o", str(tmp_path / "r.json")) == 0
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    items = {i["item"]: i for i in report["checklist"]["items"]}
    assert set(items["II.5"]["rules"]) >= {"canary_not_derivable", "canary_unique"}
    rows = [json.loads(line) for line in verdicts.read_text(encoding="utf-8").splitlines()]
    assert items["II.5"]["episodes_flagged"] == sum(
        1 for v in rows if {r["rule"] for r in v["reasons"]} & set(items["II.5"]["rules"]))
    assert report["checklist"]["rules_from"]["matches_verdicts"]


def test_check_json_summary_records_params_overrides_and_input_hashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    episode = ROOT / "examples" / "clean-structured.yaml"
    assert _run("check", str(episode), "--format", "json", "--param", "min_partial_len=7", "--by", "model") == 0
    doc = json.loads(capsys.readouterr().out)
    summary = doc["summary"]
    assert summary["inputs"] == [{"path": str(episode), "sha256": "sha256:" + hashlib.sha256(episode.read_bytes()).hexdigest()}]
    params = {p["name"]: p for p in summary["params"]}
    assert params["min_partial_len"] == {"name": "min_partial_len", "value": 7, "override": True}
    assert params["min_rubric_overlap"]["override"] is False
    assert doc["verdicts"][0]["params"] == summary["params"]
    assert summary["ruleset"]["hash"].startswith("sha256:") and summary["litmus_rules_version"]
    assert summary["groups"]["rows"][0]["group"] == {"run.model": "(none)"}
    assert (summary["episodes"], summary["SCORED"]) == (1, 1)


def test_a_bad_verdict_line_is_a_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"verdict": "SCORED"}\nnot json\n', encoding="utf-8")
    assert _run("report", str(bad)) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:2" in err and "not a JSON verdict" in err
