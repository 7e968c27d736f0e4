"""The run of datamodel-code-generator that makes the pydantic flavour's ``models.py``.

:func:`models_job` gathers what it is given from acpgen's type model (see :mod:`.pydantic_models`)
as plain data, whose digest stands for the module: ``acpgen check`` and a regeneration whose
manifest records the module made for that digest reuse it, and a process that made it once
(a library user's, the tests') keeps it, instead of spending seconds in datamodel-code-generator
again. :func:`run_models_job` runs it through its Python API with acpgen's class template
(``templates/pydantic/pydantic_v2/``) and a class-name hook that keeps each name as given.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from ..diagnostics import DiagnosticError, error
from ..model.spec import Spec
from ..version import __version__
from .environment import TEMPLATES
from .pydantic_layout import sorted_imports
from .pydantic_models import (
    INSTALL_HINT,
    flavour_schema,
    module_header,
    property_aliases,
    support_used,
    template_data_of,
    template_imports,
    union_data,
)

#: acpgen's templates for datamodel-code-generator (``pydantic_v2/BaseModel.jinja2``, ...).
PYDANTIC_TEMPLATES = TEMPLATES / "pydantic"


@dataclass(frozen=True)
class ModelsJob:
    """What makes the pydantic flavour's ``models.py``: what datamodel-code-generator is given
    (the flavour's schema, the module's header, every property's Python name, the class
    template's data), and acpgen's footer, in black's style already. Plain data: its
    :attr:`digest` stands for the module, so a run that knows the module made for a digest need
    not run datamodel-code-generator again."""

    schema: dict[str, Any]
    header: str
    aliases: dict[str, str]
    template_data: dict[str, dict[str, Any]]
    footer: str

    @property
    def digest(self) -> str:
        """The sha256 of the job, of the versions of the tools that run it and of acpgen's code
        and templates that shape their output."""
        job = [self.schema, self.header, self.aliases, self.template_data, self.footer]
        return hashlib.sha256(json.dumps([job, _tooling()], sort_keys=True).encode()).hexdigest()


def models_job(spec: Spec, header_text: str, env: jinja2.Environment) -> ModelsJob:
    """The job that makes ``spec``'s ``models.py`` of the pydantic flavour (``env`` renders the
    footer: a user's ``pydantic/models_footer.jinja`` replaces acpgen's)."""
    classes = template_data_of(spec.classes)
    unions = union_data(spec.types)
    return ModelsJob(
        schema=flavour_schema(spec.types),
        header=module_header(header_text, spec.source.name, support_used(classes, unions), template_imports(classes)),
        aliases=property_aliases(spec.classes),
        template_data={**classes, **unions},
        footer="\n\n" + env.get_template("pydantic/models_footer.jinja").render(spec=spec).lstrip("\n"),
    )


def run_models_job(job: ModelsJob) -> str:
    """datamodel-code-generator's part of ``models.py`` (for
    :func:`.pydantic_layout.black_where_needed`), its imports sorted."""
    try:
        from datamodel_code_generator import InputFileType, LiteralType, PythonVersion
        from datamodel_code_generator import generate as dmcg_generate
        from datamodel_code_generator.enums import DataModelType
    except ImportError:
        raise DiagnosticError([error("", INSTALL_HINT)]) from None
    body = dmcg_generate(
        job.schema,
        input_file_type=InputFileType.JsonSchema,
        output_model_type=DataModelType.PydanticV2BaseModel,
        target_python_version=PythonVersion.PY_310,
        custom_template_dir=PYDANTIC_TEMPLATES,
        custom_class_name_generator=_same_name,
        custom_file_header=job.header,
        disable_future_imports=True,  # the header has it: it must come first
        aliases=job.aliases,
        extra_template_data=defaultdict(dict, job.template_data),
        skip_root_model=True,
        use_type_alias=True,
        use_union_operator=True,
        use_standard_collections=True,
        use_annotated=True,
        field_constraints=True,
        enum_field_as_literal=LiteralType.All,
        strict_nullable=True,
        use_schema_description=True,
        use_field_description=True,
        use_double_quotes=True,
        disable_timestamp=True,
        formatters=[],  # its built-in formatter fails on some Python versions: acpgen formats
    )
    assert isinstance(body, str)
    return sorted_imports(body).rstrip("\n") + "\n"


@functools.lru_cache(maxsize=1)
def _tooling() -> dict[str, str]:
    """What shapes a job's output besides the job: the versions of datamodel-code-generator and
    black, and the text of acpgen's version, of this module, of the layout that follows
    datamodel-code-generator and of the class templates it is given."""
    here = Path(__file__).parent
    shaping = [here / "pydantic_job.py", here / "pydantic_layout.py", *sorted(PYDANTIC_TEMPLATES.rglob("*.jinja2"))]
    found = {name: _installed(name) for name in ("datamodel-code-generator", "black")}
    found["acpgen"] = __version__
    for path in shaping:
        found[path.relative_to(here).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _installed(distribution: str) -> str:
    import importlib.metadata  # here: importing it costs a check of another flavour 10 ms

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def _same_name(name: str) -> str:
    """datamodel-code-generator's class-name hook: every ``$def`` already has its final name."""
    return name
