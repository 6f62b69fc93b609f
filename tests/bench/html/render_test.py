"""Render test of the HTML benchmark report: a tiny `osprey bench --frameworks osprey,onnxruntime
--threads 1,2 --batch 1,2 --out DIR` run, then DIR/report.html loaded in headless Chromium.
Checks the rendered DOM (every plot present, with drawn paths/rects for each framework that ran,
no error text) and that the screenshot is a real picture holding each framework's colour.
Timing values are never asserted.

    python tests/bench/html/render_test.py build-html/cli/osprey [--keep DIR]

Exit 0 = pass, 1 = fail, 77 = skipped (chromium or onnx missing; with OSPREY_REQUIRE_ZOO=1 a
missing chromium is a failure). --keep DIR leaves report.html and screenshot.png there."""

import os
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from e2e_util import FAILURES, check, tiny_model  # noqa: E402


HERE = Path(__file__).resolve().parent
WIDTH, HEIGHT = 1400, 3000


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Dom(HTMLParser):
    """Collects the svg plots (id, class) and, per plot, the drawn elements per framework."""

    def __init__(self):
        super().__init__()
        self.plots = []  # [{"id", "class", "drawn": {framework: count}}]
        self.framework = None
        self.text = []
        self.depth_in_group = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.plots.append({"id": a.get("id", ""), "class": a.get("class", ""), "drawn": {}})
        elif tag == "g" and "data-framework" in a:
            self.framework = a["data-framework"]
        elif tag in ("path", "rect", "circle") and self.framework and self.plots:
            drawn = self.plots[-1]["drawn"]
            drawn[self.framework] = drawn.get(self.framework, 0) + 1

    def handle_endtag(self, tag):
        if tag == "g":
            self.framework = None

    def handle_data(self, data):
        self.text.append(data)


def run_chromium(chromium, url, extra, profile):
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--user-data-dir=" + str(profile), f"--window-size={WIDTH},{HEIGHT}",
           "--hide-scrollbars", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def check_screenshot(png, colors):
    from PIL import Image

    img = Image.open(png).convert("RGB")
    check(img.size == (WIDTH, HEIGHT), f"screenshot is {WIDTH}x{HEIGHT}, got {img.size}")
    counts = img.getcolors(maxcolors=1 << 24) or []
    by_color = {c: n for n, c in counts}
    check(len(by_color) >= 50, f"screenshot is a real picture (distinct colours {len(by_color)})")
    white = by_color.get((255, 255, 255), 0) + by_color.get((250, 250, 250), 0)
    check(white < 0.97 * WIDTH * HEIGHT, f"screenshot is not blank ({white} background pixels)")
    for fw, hex_color in colors.items():
        rgb = tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
        check(by_color.get(rgb, 0) >= 200,
              f"{fw}'s colour {hex_color} is drawn in the screenshot ({by_color.get(rgb, 0)} pixels)")


def main():
    args = sys.argv[1:]
    keep = None
    if "--keep" in args:
        i = args.index("--keep")
        keep = Path(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    osprey = args[0]
    chromium = find_chromium()
    if not chromium:
        if os.environ.get("OSPREY_REQUIRE_ZOO") == "1":
            print("FAIL: chromium is not installed (Debian package chromium) and OSPREY_REQUIRE_ZOO=1",
                  file=sys.stderr)
            return 1
        print("skipped: chromium is not installed (Debian package chromium)", file=sys.stderr)
        return 77
    try:
        import onnx  # noqa: F401
        import PIL  # noqa: F401
    except ImportError as e:
        print(f"skipped: {e}", file=sys.stderr)
        return 77

    tmp = Path(tempfile.mkdtemp(prefix="osprey_bench_html_"))
    model = tmp / "tiny.onnx"
    tiny_model(model)
    out = tmp / "out"
    r = subprocess.run([osprey, "bench", str(model), "--frameworks", "osprey,onnxruntime", "--threads", "1,2",
                        "--batch", "1,2", "--warmup", "1", "--iterations", "12", "--window", "4", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, f"osprey bench exits 0 (rc {r.returncode}, stderr {r.stderr[-800:]})")
    report = out / "report.html"
    check(report.is_file(), "report.html is written next to results.json")
    if FAILURES:
        return 1
    text = report.read_text()
    check("report.html" in r.stdout, "the command lists report.html among its reports")
    for banned in ("<script", "<link", "src=", "url(", "http://", "https://"):
        if banned == "http://":  # the SVG namespace is the one allowed URL
            text_wo_ns = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
            check(banned not in text_wo_ns, "report.html loads nothing from the network")
        else:
            check(banned not in text, f"report.html is self-contained (no {banned})")

    import json
    results = json.load(open(out / "results.json"))
    ran = sorted({m["framework"] for m in results["measurements"] if m["status"] == "ok"})
    check("osprey" in ran, f"osprey ran: {ran}")
    cells = [c["id"] for c in results["cells"]]
    check(len(cells) == 4, f"2 threads x 2 batches = 4 cells, got {cells}")

    profile = tmp / "profile"
    dom_run = run_chromium(chromium, report.as_uri(), ["--dump-dom"], profile)
    check(dom_run.returncode == 0, f"chromium --dump-dom exits 0 ({dom_run.stderr[-500:]})")
    dom = Dom()
    dom.feed(dom_run.stdout)
    ids = {p["id"]: p for p in dom.plots}
    expected = [f"cdf-{c}" for c in cells] + ["latency-bars-m0", "rss-bars-m0", "throughput-threads-m0-0",
                                              "throughput-batch-m0-0"]
    for pid in expected:
        check(pid in ids, f"rendered DOM has plot {pid} (plots: {sorted(ids)})")
        if pid in ids:
            for fw in ran:
                check(ids[pid]["drawn"].get(fw, 0) > 0,
                      f"plot {pid} draws {fw} (drawn: {ids[pid]['drawn']})")
    page_text = " ".join(dom.text)
    for bad in ("NaN", "Infinity", "no data to plot", "not finite"):
        check(bad not in page_text, f"rendered page has no '{bad}'")
    check("Osprey benchmark report" in page_text and "Environment" in page_text, "page has its sections")

    shot = tmp / "screenshot.png"
    shot_run = run_chromium(chromium, report.as_uri(), [f"--screenshot={shot}"], profile)
    check(shot_run.returncode == 0 and shot.is_file(), f"chromium --screenshot works ({shot_run.stderr[-500:]})")
    if shot.is_file():
        palette = ["#0072b2", "#e69f00"]  # report_plots.cc palette_color(0), (1)
        order = results["settings"]["frameworks"]
        check_screenshot(shot, {fw: palette[order.index(fw)] for fw in ran})
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy(report, keep / "report.html")
        if shot.is_file():
            shutil.copy(shot, keep / "screenshot.png")
    shutil.rmtree(tmp, ignore_errors=True)

    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed", file=sys.stderr)
        return 1
    print(f"bench_html_render: all checks passed ({len(dom.plots)} plots, frameworks {ran})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
