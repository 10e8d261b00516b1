"""Every relative link in the README and docs/ leads to a file, and to a heading in it."""

from __future__ import annotations

from pathlib import Path

from tests.docs.markdown import ROOT, Link, anchors, broken, documents, links, slug


def test_every_relative_link_resolves() -> None:
    failures = [f"{link}: {why}" for d in documents() for link in links(d) if (why := broken(link))]
    assert not failures, "\n".join(failures)


def test_the_docs_index_lists_every_docs_file() -> None:
    index = (ROOT / "docs" / "README.md").read_text()
    for path in sorted((ROOT / "docs").glob("*.md")):
        if path.name != "README.md":
            assert f"]({path.name})" in index, f"docs/README.md does not link {path.name}"


def test_the_readme_links_the_docs_index_and_stays_short() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "](docs/README.md)" in readme
    assert len(readme.split("\n")) <= 350


def test_slugs_follow_githubs_rule() -> None:
    assert slug("Cost: forecasts and budgets") == "cost-forecasts-and-budgets"
    assert slug("Runs, records, resume") == "runs-records-resume"
    assert slug("Benchmark: `bench/suite_vs_lmeval.py`") == "benchmark-benchsuite_vs_lmevalpy"
    assert anchors("# A\n# A\n```\n# B\n```\n") == {"a", "a-1"}


def test_the_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    page = ROOT / "docs" / "README.md"
    assert broken(Link(page, 1, "nowhere.md")) == "no such file"
    assert "anchor #nowhere" in str(broken(Link(page, 1, "tasks.md#nowhere")))
    assert broken(Link(page, 1, "tasks.md#writing-a-task")) is None
    assert "outside the repository" in str(broken(Link(page, 1, "../../shared/DESIGN.md")))
    assert broken(Link(page, 1, "https://example.com/x.md#y")) is None
