"""Built-in templates emit black's style, so generation never needs black for them.

Black (pinned, in acpgen's mode) must leave every built-in module unchanged: for the bundled
schema, for a spread of corpus releases, and for names long enough that lines must split. Output
that reads a user's template, or has a line the layout cannot give black's style, is formatted by
black instead.
"""

from __future__ import annotations

import pytest
from support import CORPUS, ROOT, mini_schema

from acpgen.output import formatting
from acpgen.output.formatting import format_python
from acpgen.pipeline import Options, generate
from acpgen.render import layout
from acpgen.render.layout import LINE_LENGTH, fit
from acpgen.render.longlines import logical_line
from acpgen.render.modules import BY_NAME, Source, module_names
from acpgen.render.tokens import Unfitted

PKG = "acp_bindings"
#: The modules whose text depends on the schema's methods (models.py has tests of its own).
SCHEMA_MODULES = {"__init__.py", "methods.py", "agent.py", "client.py", "stub_agent.py", "stub_client.py"}


#: The models and their codec: tests/models/test_models_static.py holds the bundled schema's to black
#: (a sample of their 42,000 lines), tests/render/test_no_black.py two releases' whole.
MODELS = frozenset({"models.py", "_models_codec.py"})


def assert_black_leaves_alone(files: dict[str, str], skip: frozenset[str] = MODELS) -> None:
    checked = [path for path in files if path.endswith(".py") and path.rsplit("/", 1)[1] not in skip]
    assert checked
    for path in checked:
        assert format_python(files[path], path) == files[path], path


@pytest.fixture
def no_black(monkeypatch):
    """Fail when black formats anything."""

    def refuse(source, filename="<generated>", why=""):
        raise AssertionError(f"black ran on {filename}")

    monkeypatch.setattr("acpgen.output.reuse.format_python", refuse)


def test_every_module_of_the_bundled_schema_is_black_style_without_black(no_black):
    output = generate(Options())
    assert set(output.files) >= {f"{PKG}/{BY_NAME[name].path}" for name in SCHEMA_MODULES | {"_rpc.py", "_codec.py", "pair.py"}}
    assert set(output.renders) == set(output.files)  # and black formatted none of them (no_black)
    assert_black_leaves_alone(output.files)


@pytest.mark.parametrize(
    "release",
    [
        "v0.0.33--schema.json",  # the oldest: requests whose results are untyped
        "v0.4.7--schema.json",
        "v0.11.0--schema.json",
        "v0.13.8--v2-schema.unstable.json",  # protocol v2: no stub servers
        "v1.2.0--v1-schema.unstable.json",
        "v1.6.0--v2-schema.json",
        "v1.7.0--v1-schema.unstable.json",  # the newest release
    ],
)
def test_the_schema_dependent_modules_of_corpus_releases_are_black_style(release, no_black):
    files = generate(Options(schema=CORPUS / release), only=SCHEMA_MODULES).files
    assert_black_leaves_alone(files)


def test_variants_and_options_are_black_style(no_black):
    for options in (Options(side="agent", stable_only=True, package="my.vendor.acp"), Options(side="client")):
        assert_black_leaves_alone(generate(options, only=SCHEMA_MODULES | {"pair.py"}).files)


def test_a_package_of_several_versions_is_black_style_without_black(no_black):
    """Its root modules (the stubs that negotiate, the inspector, the shared runtime) too, under a
    package name long enough that the stub agent's argument line does not fit."""
    from acpgen.versioned import generate_versions

    schemas = (CORPUS / "v1.7.0--v1-schema.json", CORPUS / "v1.7.0--v2-schema.json")
    output = generate_versions(Options(package="a_package_name_long_enough_to_split"), schemas)
    assert {"stub_agent.py", "stub_client.py", "inspect.py", "_rpc.py"} <= {p.rsplit("/", 1)[1] for p in output.files}
    assert set(output.renders) == set(output.files)  # and black formatted none of them (no_black)
    # the shared runtime is the bundled package's, behind another header: that test holds it to black
    assert_black_leaves_alone(output.files, skip=MODELS | set(module_names(source=Source.RUNTIME, shared=True)))


def test_relayout_tells_arguments_from_an_assignment():
    """A line of keyword arguments inside brackets a template split is split at its commas, as
    black does; an assignment's value goes in parentheses."""
    from acpgen.render.longlines import relayout

    arguments = ("def f():\n    parser = argparse.ArgumentParser(\n"
                 f'        prog="python -m {"p" * 40}.stub_agent", description="A stub ACP agent of several versions."\n'
                 "    )\n")
    assert relayout(arguments) == format_python(arguments)
    assert relayout(arguments).count("\n") == arguments.count("\n") + 1  # one argument a line
    assignment = f'def f():\n    value = "{"v" * 50}" + "{"w" * 50}"\n'
    assert relayout(assignment) == format_python(assignment) != assignment


def assert_black_keeps(snippets: list[str]) -> None:
    """black leaves each snippet as it is (checked all at once, then one by one to name it)."""
    module = "\n\n".join(snippets)
    if format_python(module) != module:
        for snippet in snippets:
            assert format_python(snippet) == snippet


def _shapes(n: int):
    """Every line shape the built-in templates pass to `fit`, with names of length about n."""
    name, kind, wire = "h" + "z" * n, "T" + "x" * n, '"w/' + "q" * n + '"'
    cls, method = "class C:\n", "class C:\n    async def f(self):\n"
    body = "\n            return 1"
    yield cls, 4, f"async def {name}(", ["self", f"params: {kind}"], f") -> {kind}R:", body[:1] + body[5:]
    yield cls, 4, f"async def {name}(", [f"params: {kind}"], f") -> {kind}:", body[:1] + body[5:]
    yield method, 8, f"result: {kind} = _CODEC.decode(", [kind, f"await self._request({wire}, params)"], ")", ""
    yield method, 8, "raise RequestError.method_not_found(", [wire], ")", ""
    yield method, 8, "await self._notify(", [wire, "params"], ")", ""
    yield "X = {\n", 4, f"{wire}: _rpc.Route(", [f'"{name}"', kind, "True"], "),", "\n}"
    yield "def f():\n", 4, "parser = argparse.ArgumentParser(", [f'prog="python -m {name}.stub"', 'description="A stub."'], ")", ""
    yield cls, 4, "__slots__ = (", [f'"{name}"', f'"{kind}"', '"extra"'], ")", ""


def test_fit_lays_out_every_length_as_black_does():
    """Names from 0 to 110 characters cross the line limit in each shape: `fit` either matches
    black exactly or says it cannot."""
    snippets, unfitted = [], 0
    for n in range(111):
        for before, indent, head, items, tail, after in _shapes(n):
            try:
                text = fit(indent, head, items, tail, collection=head.endswith("= ("))
            except Unfitted:
                unfitted += 1
                continue
            snippets.append(before + text + after + "\n")
    assert unfitted == 0 and len(snippets) > 600  # a head too long for its line is split again, as black does
    module = "\n\n".join(snippets)
    assert format_python(module) == module
    # The realistic range never falls back: ACP names are far shorter than this.
    for before, indent, head, items, tail, _ in _shapes(40):
        assert len(fit(indent, head, items, tail)) > 0


def fit_chain(indent: int, head: str, operator: str, operands: list[str], tail: str = "") -> str:
    """A chain of one operator as a template prints it, on one line, laid out by the relayout
    pass (:func:`logical_line`)."""
    return "\n".join(logical_line(indent, head + f" {operator} ".join(operands) + tail))


def fit_ternary(indent: int, head: str, value: str, test: str, other: str) -> str:
    """A conditional expression as a template prints it, laid out by the relayout pass."""
    return "\n".join(logical_line(indent, f"{head}{value} if {test} else {other}"))


def test_fit_chain_lays_out_every_length_as_black_does():
    """A decoder's guard (``if len(d) == 2 and "key" in d:``) and a writer's sum (``out = '{"k":' +
    _str(self.k)``), with names from 0 to 110 characters: the relayout pass either matches
    black exactly or says it cannot."""
    snippets, unfitted = [], 0
    for n in range(111):
        for count in (1, 2, 5):
            guard = ["len(d) == 3", *(f'"{chr(97 + i) * n}" in d' for i in range(count))]
            total = [f"'{{\"{chr(97 + i) * n}\":'" if i % 2 == 0 else f"_str(self.{chr(97 + i) * max(n, 1)})" for i in range(count + 1)]
            ends_in_name = [*total[:-1], "x" * max(n, 1)]
            for head, operator, operands, tail in (
                ("if ", "and", guard, ":"),
                ("out = ", "+", total, ""),
                ("out += ", "+", ends_in_name, ""),
                # a nullable tag's value: two operands, the last in parentheses (the SDK's schemas)
                ("out = ", "+", [total[0], f'("null" if self.{"n" * max(n, 1)} is None else _str(self.{"n" * max(n, 1)}))'], ""),
            ):
                try:
                    text = fit_chain(8, head, operator, operands, tail)
                except Unfitted:
                    unfitted += 1
                    continue
                body = "\n            pass" if tail == ":" else ""
                snippets.append(f"def f(d):\n    if d:\n{text}{body}\n")
    assert not unfitted and len(snippets) > 1300
    assert_black_keeps(snippets)
    assert fit_chain(4, "if ", "and", ["a", "b"], ":") == "    if a and b:"


def test_fit_chain_splits_a_writers_null_or_value_as_black_does():
    """A writer's ``out = '{"k":' + ("null" if self.v is None else _str(self.v))`` (a required
    field that may be null), with names from 0 to 110 characters: black splits inside the
    ternary's parentheses while the line up to them fits; `fit_chain` matches it at every length."""
    snippets, unfitted = [], 0
    for n in range(111):
        for m in (1, 20, 45, 70):
            operands = [f"'{{\"{'k' * n}\":'", f'("null" if self.{"v" * m} is None else _str(self.{"v" * m}))']
            try:
                text = fit_chain(8, "out = ", "+", operands)
            except Unfitted:
                unfitted += 1
                continue
            snippets.append(f"def f(self):\n    if self:\n{text}\n")
    assert not unfitted and len(snippets) == 111 * 4
    assert any("+ (\n" in s for s in snippets) and any("\n            if self" in s for s in snippets)
    module = "\n\n".join(snippets)
    assert format_python(module) == module


def test_fit_ternary_lays_out_every_length_as_black_does():
    """A decoder's ``o._extra = None if len(d) == 2 + p else _codec.unknown(d, _K_Name)`` with
    names from 0 to 110 characters: `fit_ternary` either matches black exactly or says it cannot."""
    snippets, unfitted = [], 0
    for n in range(111):
        try:
            text = fit_ternary(4, "o._extra = ", "None", "len(d) == 2 + p", f"_codec.unknown(d, _K_{'N' * n})")
        except Unfitted:
            unfitted += 1
            continue
        snippets.append(f"def f(d):\n{text}\n")
    assert not unfitted and len(snippets) == 111
    assert_black_keeps(snippets)


def test_fit_splits_only_what_is_too_long():
    assert fit(0, "f(", ["a", "b"], ")") == "f(a, b)"
    long = "x" * 45
    assert fit(4, "call(", [long, long], ")") == f"    call(\n        {long}, {long}\n    )"
    assert fit(4, "call(", [long, long, long], ")") == f"    call(\n        {long},\n        {long},\n        {long},\n    )"
    assert fit(0, "def f(", [long * 2], ") -> None:") == f"def f(\n    {long * 2},\n) -> None:"
    # an item too long for a line of its own stays too long, as black leaves it
    assert fit(0, "call(", ["y" * (LINE_LENGTH - 3)], ")") == f"call(\n    {'y' * (LINE_LENGTH - 3)}\n)"
    # a head too long for a line with no bracket before its own: black leaves it too long
    assert fit(0, "x" * LINE_LENGTH + "(", ["a"], ")") == "x" * LINE_LENGTH + "(\n    a\n)"
    assert format_python("x" * LINE_LENGTH + "(a)\n") == "x" * LINE_LENGTH + "(\n    a\n)\n"


def test_a_name_longer_than_a_line_sends_no_module_through_black(write_schema, monkeypatch):
    doc = mini_schema()
    long_name = "Ping" + "Really" * 16 + "Request"  # over 100 characters: black leaves lines too long
    doc["$defs"][long_name] = doc["$defs"].pop("PingRequest")
    formatted = []
    real = formatting.format_python

    def counting(source, filename="<generated>", why=""):
        formatted.append(filename)
        return real(source, filename, why)

    monkeypatch.setattr("acpgen.output.reuse.format_python", counting)
    files = generate(Options(schema=write_schema(doc))).files
    assert long_name in files[f"{PKG}/agent.py"]
    # fit lays out the lines it is given, relayout the ones templates write whole (class X(Model):)
    assert formatted == []
    assert_black_leaves_alone(files, skip=frozenset())
    assert "\n".join(layout.inside(8, f"params: {long_name},")) == f"        params: {long_name},"


def test_a_users_template_is_formatted_by_black_and_only_its_modules_are(tmp_path, monkeypatch):
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "pair.py.jinja").write_text("x=[1,2 ,3]\n")
    (templates / "_peer.jinja").write_text(  # read by agent.py and client.py
        (ROOT / "acpgen" / "render" / "templates" / "_peer.jinja").read_text().replace(
            "def on_connect(self,", "def on_connect( self ,"
        )
    )
    formatted = []
    real = formatting.format_python

    def counting(source, filename="<generated>", why=""):
        formatted.append(filename.rsplit("/", 1)[1])
        return real(source, filename, why)

    monkeypatch.setattr("acpgen.output.reuse.format_python", counting)
    files = generate(Options(templates=templates)).files
    assert sorted(formatted) == ["agent.py", "client.py", "pair.py"]
    assert files[f"{PKG}/pair.py"] == "x = [1, 2, 3]\n"
    assert "    def on_connect(self, connection: AgentSideConnection) -> None:" in files[f"{PKG}/agent.py"]
    builtin = generate(Options()).files[f"{PKG}/agent.py"]
    assert files[f"{PKG}/agent.py"] == builtin.replace("generate`", "generate --templates templates`", 1)
