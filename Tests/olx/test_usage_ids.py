"""coursepack's usage ids against the LMS import's, over every course in ../shared/corpus and
over small OLX snippets, one per naming rule. Needs the debug coursepack (`make test` builds
it) and lxml (`scripts/ensure-deps.sh --test`); under CI=true a missing one fails."""
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BINARY = REPO / ".build" / "debug" / "coursepack"
CORPUS = Path(os.environ.get("COURSEPACK_CORPUS", REPO.parent / "shared" / "corpus"))
IN_CI = os.environ.get("CI") == "true"


def need(condition, why):
    if not condition:
        if IN_CI:
            pytest.fail(why)
        pytest.skip(why)


try:
    import lxml  # noqa: F401
    HAVE_LXML = True
except ImportError:
    HAVE_LXML = False


def lms_ids(root):
    need(HAVE_LXML, "lxml is not installed (scripts/ensure-deps.sh --test installs it)")
    from lms_walk import usage_ids
    return usage_ids(root)


def outline(root):
    need(BINARY.is_file(), f"{BINARY} is missing (swift build --build-tests builds it)")
    run = subprocess.run([str(BINARY), "inspect", "--json", str(root)], capture_output=True, text=True, timeout=300)
    assert run.stdout.strip(), f"no JSON from coursepack inspect: {run.stderr}"
    return json.loads(run.stdout)


def coursepack_errors(root):
    return outline(root)["errors"]


def coursepack_ids(root):
    tree = outline(root)
    seen, out = set(), []
    for block in tree["blocks"]:
        key = (block["type"], block["url_name"])
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def corpus_courses():
    roots = sorted(path.parent for path in CORPUS.glob("*/course.xml")) + sorted(path.parent for path in CORPUS.glob("*/*/course.xml"))
    return roots


def compare(root):
    expected, got = lms_ids(root), coursepack_ids(root)
    if not expected:
        # The LMS refuses the course (its own file is missing or broken): coursepack reports it.
        assert len(got) <= 1 and coursepack_errors(root), f"{root}: the LMS import loads no course, coursepack reports nothing"
        return
    missing = [block for block in expected if block not in set(got)]
    extra = [block for block in got if block not in set(expected)]
    assert not missing and not extra, f"{root}: LMS ids coursepack lacks: {missing[:20]}; coursepack ids the LMS lacks: {extra[:20]}"
    assert got == expected, f"{root}: same ids in another order"


def test_corpus_is_there():
    need(CORPUS.is_dir(), f"no corpus at {CORPUS}")
    assert corpus_courses(), f"no course.xml under {CORPUS}"


@pytest.mark.parametrize("root", corpus_courses(), ids=lambda path: path.relative_to(CORPUS).as_posix())
def test_corpus_course_ids_match_the_lms(root):
    compare(root)


SNIPPETS = {
    "url_name_missing": """
        <vertical>
          <html><p>No name at all</p></html>
          <problem><p>Also none</p><choiceresponse/></problem>
        </vertical>""",
    "display_name_fallback": """
        <vertical>
          <html display_name="Intro: what &amp; why?">x</html>
          <problem name="Old   name!" display_name="ignored">y</problem>
          <video display_name="Café  crème — part 1"/>
        </vertical>""",
    "reused_names": """
        <vertical>
          <problem url_name="same">one</problem>
          <problem url_name="same">two</problem>
          <problem url_name="problem_same_0123456789ab">three</problem>
          <problem url_name="problem_same_0123456789ab">four</problem>
          <html url_name="shared">a</html>
          <html url_name="shared">b</html>
          <html>twin</html>
          <vertical><html>twin</html></vertical>
          <problem url_name="gone"/>
          <problem url_name="gone">a later block of a name whose file is missing</problem>
        </vertical>""",
    "comments_whitespace_cdata_entities": """
        <vertical>
          <!-- a comment between blocks -->
          <html>
            <!-- a comment inside -->
            <p class='a'   id="b">&lt;tag&gt; &amp; &#233; &#x263A; caf\u00e9</p>
            <![CDATA[ <b>raw</b> ]]>
            <br/>
          </html>
          <problem attr="tab\there
        line" empty=""><text>  </text><text></text><?pi  some data ?></problem>
          <html>  </html>
        </vertical>""",
    "nested_inline_children": """
        <vertical>
          <conditional sources="i4x://o/c/problem/p" correct="True">
            <show sources="i4x://o/c/html/h"/>
            <html>shown when correct</html>
            <vertical><problem><p>deep</p></problem></vertical>
          </conditional>
          <split_test user_partition_id="0" group_id_to_child='{"0": "i4x://o/c/vertical/a"}'>
            <vertical url_name="a" display_name="A"><html>gr\u00fcn</html></vertical>
            <vertical display_name="B"><html>rouge</html></vertical>
          </split_test>
          <library_content><problem><p>\u00e9t\u00e9</p></problem></library_content>
        </vertical>""",
}


def write_course(folder, vertical):
    (folder / "course").mkdir(parents=True)
    (folder / "course.xml").write_text('<course url_name="run" org="o" course="c"/>\n')
    (folder / "course" / "run.xml").write_text(
        '<course display_name="Snippets">\n  <chapter url_name="ch">\n    <sequential url_name="seq">\n'
        + textwrap.dedent(vertical).strip("\n") + "\n    </sequential>\n  </chapter>\n</course>\n", encoding="utf-8")


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_ids_match_the_lms(tmp_path, name):
    write_course(tmp_path / name, SNIPPETS[name])
    compare(tmp_path / name)


def test_crlf_and_non_ascii_names(tmp_path):
    folder = tmp_path / "crlf"
    write_course(folder, "<vertical>\r\n  <html>é\r\n</html>\r\n  <problem display_name='ünïcode ✓'>q</problem>\r\n</vertical>")
    compare(folder)
