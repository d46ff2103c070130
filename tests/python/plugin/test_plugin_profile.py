"""GetProfile and GetReport through the plugin (issue 32): the plugin forwards them like every RPC, and
the answers are the builder's: the layers `graph-ascend info --profile` prints, the HTML `graph-ascend
report` writes."""

import subprocess

from plugin_harness import rel


def test_profile_is_the_layers_info_prints(tb, logdir, builder):
    file = rel(logdir, "x/run/compare_*.vis")
    body = tb.ok("GetProfile", {"file": file})
    assert body["available"] is True
    assert body["series"] == ["forward", "backward", "parameter gradients"]
    text = subprocess.run(
        [str(builder), "info", "--profile", file], cwd=logdir, check=True, capture_output=True, text=True
    ).stdout
    rows = [line.split()[0] for line in text.splitlines()[4:]]
    assert [p["label"] for p in body["points"]] == rows
    assert f"layer profile by {body['grouping']} ({len(rows)} points)" in text
    assert body["svg"].startswith('<svg class="ga-profile-chart"')
    assert body["svg"].count('class="ga-profile-hit"') == len(rows)


def test_report_is_the_file_report_writes(tb, logdir, builder, tmp_path):
    file = rel(logdir, "x/run/compare_*.vis")
    body = tb.ok("GetReport", {"file": file})
    out = tmp_path / "report.html"
    subprocess.run([str(builder), "report", file, "-o", str(out)], cwd=logdir, check=True)
    assert body["html"] == out.read_text(encoding="utf-8")
    assert body["fileName"].endswith(".report.html")
    assert "http" not in body["html"] and "src=" not in body["html"]


def test_a_build_is_refused(tb, logdir):
    status, body = tb.api("GetProfile", {"file": rel(logdir, "overflow/build_*.vis")})
    assert status != 200
    assert "a build of one run" in body["error"]["message"]
