"""Inline SVG charts for the HTML report, drawn from the report document alone. Static markup:
no script, no external font or stylesheet, readable in print (patterns of grey as well as colour)."""

from __future__ import annotations

from typing import Any, Mapping

from markupsafe import Markup, escape

PALETTE = ["#b2182b", "#ef8a62", "#fddbc7", "#d1e5f0", "#67a9cf", "#8073ac", "#e08214", "#999999"]
SCORED_COLOUR = "#1b7837"
ERROR_COLOUR = "#404040"
SEVERAL_COLOUR = "#762a83"


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def flow_chart(flow: Mapping[str, Any]) -> Markup:
    """One horizontal stacked bar per group: ERROR, REJECTED by each rule alone, by several, SCORED."""
    groups = flow["groups"]
    rules = flow["rules"]
    segments = [("ERROR", ERROR_COLOUR, lambda g: g["error"])]
    for i, rule in enumerate(rules):
        segments.append((f"rejected: {rule} alone", PALETTE[i % len(PALETTE)], lambda g, r=rule: g["rejected_alone"][r]))
    segments.append(("rejected: several rules", SEVERAL_COLOUR, lambda g: g["rejected_by_several"]))
    segments.append(("SCORED", SCORED_COLOUR, lambda g: g["scored"]))
    label_w, bar_w, row_h = 220, 520, 26
    legend_h = 18 * len(segments) + 10
    height = row_h * len(groups) + legend_h + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="chart" viewBox="0 0 {label_w + bar_w + 90} {height}" '
           f'width="{label_w + bar_w + 90}" height="{height}">',
           '<title>Exclusion flow: share of each group\'s episodes by outcome</title>']
    for gi, g in enumerate(groups):
        y = 10 + gi * row_h
        out.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end" font-size="12">{escape(g["label"])}'
                   f'{" ⚑" if g["uneven"] else ""}</text>')
        total = g["input"] or 1
        x = float(label_w)
        for name, colour, value in segments:
            n = value(g)
            if not n:
                continue
            w = bar_w * n / total
            out.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{row_h - 6}" fill="{colour}" '
                       f'stroke="#000" stroke-width="0.5"><title>{escape(g["label"])}: {escape(name)} {n}</title></rect>')
            x += w
        out.append(f'<text x="{label_w + bar_w + 6}" y="{y + 15}" font-size="12">n={g["input"]}</text>')
    ly = 20 + row_h * len(groups)
    for i, (name, colour, _) in enumerate(segments):
        out.append(f'<rect x="{label_w}" y="{ly + 18 * i}" width="12" height="12" fill="{colour}" stroke="#000" stroke-width="0.5"/>'
                   f'<text x="{label_w + 18}" y="{ly + 18 * i + 10}" font-size="12">{escape(name)}</text>')
    out.append("</svg>")
    return Markup("".join(out))


def rates_chart(rates: Mapping[str, Any], label: str) -> Markup:
    """Per group, the rate of one label: naive (hollow), validated (filled) with its Wilson 95%
    whiskers, and the sensitivity range (grey band: REJECTED counted all as the label, or none)."""
    groups = [g for g in rates["groups"] if any(r["label"] == label for r in g["rates"])]
    label_w, plot_w, row_h = 220, 480, 30
    height = row_h * len(groups) + 70
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" role="img" class="chart" viewBox="0 0 {label_w + plot_w + 40} {height}" '
           f'width="{label_w + plot_w + 40}" height="{height}">',
           f'<title>Rate of "{escape(label)}": naive vs validated, with Wilson 95% intervals</title>']
    def px(v: float) -> float:
        return label_w + plot_w * v
    for tick in range(0, 11, 2):
        x = px(tick / 10)
        out.append(f'<line x1="{x:.1f}" y1="5" x2="{x:.1f}" y2="{height - 55}" stroke="#ccc" stroke-width="0.5"/>'
                   f'<text x="{x:.1f}" y="{height - 42}" font-size="11" text-anchor="middle">{tick * 10}%</text>')
    for gi, g in enumerate(groups):
        rate = next(r for r in g["rates"] if r["label"] == label)
        y = 15 + gi * row_h
        out.append(f'<text x="{label_w - 8}" y="{y + 4}" text-anchor="end" font-size="12">{escape(g["label"])}</text>')
        lo, hi = rate["bounds"]["rejected_none_label"], rate["bounds"]["rejected_all_label"]
        if lo is not None and hi is not None:
            out.append(f'<rect x="{px(lo):.2f}" y="{y - 9}" width="{max(px(hi) - px(lo), 1):.2f}" height="18" fill="#e0e0e0">'
                       f'<title>sensitivity: {_pct(lo)} to {_pct(hi)}</title></rect>')
        v = rate["validated"]
        if v["rate"] is not None:
            out.append(f'<line x1="{px(v["lo"]):.2f}" y1="{y}" x2="{px(v["hi"]):.2f}" y2="{y}" stroke="#000" stroke-width="1.5"/>'
                       f'<line x1="{px(v["lo"]):.2f}" y1="{y - 5}" x2="{px(v["lo"]):.2f}" y2="{y + 5}" stroke="#000"/>'
                       f'<line x1="{px(v["hi"]):.2f}" y1="{y - 5}" x2="{px(v["hi"]):.2f}" y2="{y + 5}" stroke="#000"/>'
                       f'<circle cx="{px(v["rate"]):.2f}" cy="{y}" r="5" fill="{SCORED_COLOUR}" stroke="#000">'
                       f'<title>validated {_pct(v["rate"])} [{_pct(v["lo"])}, {_pct(v["hi"])}], n={v["n"]}</title></circle>')
        nv = rate["naive"]
        if nv["rate"] is not None:
            out.append(f'<rect x="{px(nv["rate"]) - 4:.2f}" y="{y - 4}" width="8" height="8" fill="#fff" stroke="#b2182b" '
                       f'stroke-width="2"><title>naive {_pct(nv["rate"])}, n={nv["n"]}</title></rect>')
    ly = height - 25
    out.append(f'<circle cx="{label_w + 6}" cy="{ly}" r="5" fill="{SCORED_COLOUR}" stroke="#000"/>'
               f'<text x="{label_w + 16}" y="{ly + 4}" font-size="12">validated (SCORED) ± Wilson 95%</text>'
               f'<rect x="{label_w + 226}" y="{ly - 4}" width="8" height="8" fill="#fff" stroke="#b2182b" stroke-width="2"/>'
               f'<text x="{label_w + 240}" y="{ly + 4}" font-size="12">naive (all classified)</text>'
               f'<rect x="{label_w + 380}" y="{ly - 6}" width="14" height="12" fill="#e0e0e0"/>'
               f'<text x="{label_w + 398}" y="{ly + 4}" font-size="12">sensitivity</text>')
    out.append("</svg>")
    return Markup("".join(out))
