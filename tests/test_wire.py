"""One shape per thing on the wire (`loci.wire`): an answer's citation is a typed model that
`openapi.json` describes, it keeps every field answers always had (null where it does not
apply), and MCP's outputs are subsets of the API's models — the same fields with the same types."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from loci.answer.sources import Source
from loci.mcp.graph_outputs import GraphHit, GraphPage, GraphSummary, TimelineEntry
from loci.mcp.outputs import Citation as McpCitation
from loci.mcp.outputs import FileInfo, MorePassage, Passage
from loci.mcp.preflight_outputs import DryRun
from loci.models import Citation as Cited
from loci.models import Hit, Location
from loci.wire.citation import Citation
from loci.wire.documents import DocumentOut
from loci.wire.graph import GraphHitOut, GraphPageOut, GraphSummaryOut, GraphTimelineEntryOut
from loci.wire.hit import HitOut, PassageOut
from loci.wire.preflight import PreflightOut
from tests.support.paths import REPO

CITATION_FIELDS = {
    "number", "label", "brain", "document_id", "name", "title", "chunk_id", "chunk_index",
    "page", "line_start", "line_end", "heading_path", "source_url", "region", "ocr_confidence",
    "time_start", "time_end", "snippet", "highlights", "where",
}  # fmt: skip


def _refs(schema: Any) -> set[str]:
    if isinstance(schema, dict):
        return {schema["$ref"]} if "$ref" in schema else set().union(*map(_refs, schema.values()))
    if isinstance(schema, list):
        return set().union(*map(_refs, schema)) if schema else set()
    return set()


def test_openapi_describes_an_answers_citation() -> None:
    schemas = json.loads((REPO / "openapi.json").read_text())["components"]["schemas"]
    citation = schemas["Citation"]
    assert set(citation["properties"]) == CITATION_FIELDS
    # always present, as answers always carried them (null where they do not apply)
    assert set(citation["required"]) >= CITATION_FIELDS - {
        "region", "ocr_confidence", "time_start", "time_end",
    }  # fmt: skip
    ref = "#/components/schemas/Citation"
    assert _refs(schemas["AnswerOut"]["properties"]["citations"]) == {ref}
    assert _refs(schemas["QuizQuestionOut"]["properties"]["source"]) == {ref}
    assert _refs(schemas["FlashcardOut"]["properties"]["source"]) == {ref}
    assert _refs(schemas["DigestSummaryOut"]["properties"]["sources"]) == {ref}


def test_a_citation_shows_every_field_null_where_it_does_not_apply() -> None:
    at = Location(page=3, line_start=4, line_end=9)
    cited = Cited(7, "report.pdf", None, 2, at, ("Results", "Costs"), None)
    hit = Hit(41, cited, "The cost was 240.", "The cost was 240.", 0.9, 1, 2, 1.0, 0.5,
              highlights=((4, 8),))  # fmt: skip
    shown = Source(1, hit, "home").citation().model_dump(mode="json")
    assert shown == {
        "number": 1, "label": "Source 1", "brain": "home", "document_id": 7,
        "name": "report.pdf", "title": None, "chunk_id": 41, "chunk_index": 2, "page": 3,
        "line_start": 4, "line_end": 9, "heading_path": ["Results", "Costs"],
        "source_url": None, "region": None, "ocr_confidence": None, "time_start": None,
        "time_end": None, "snippet": "The cost was 240.", "highlights": [[4, 8]],
        "where": "report.pdf, page 3, § Results › Costs",
    }  # fmt: skip


# (MCP's model, the wire model it is a subset of, the fields only MCP has or types otherwise)
SUBSETS: list[tuple[type[BaseModel], type[BaseModel], set[str]]] = [
    (Passage, HitOut, {"passage", "uri", "passages"}),
    (MorePassage, PassageOut, {"passage"}),
    (McpCitation, Citation, set()),
    (FileInfo, DocumentOut, {"uri"}),
    (GraphSummary, GraphSummaryOut, set()),
    (TimelineEntry, GraphTimelineEntryOut, set()),
    (GraphHit, GraphHitOut, {"page", "linked"}),
    (GraphPage, GraphPageOut, {"brain", "page", "truncated", "timeline"}),
    (DryRun, PreflightOut, {"item"}),
]


@pytest.mark.parametrize(("mcp", "full", "own"), SUBSETS, ids=lambda v: getattr(v, "__name__", ""))
def test_an_mcp_output_is_a_subset_of_the_apis_model(
    mcp: type[BaseModel], full: type[BaseModel], own: set[str]
) -> None:
    shared = set(mcp.model_fields) - own
    assert shared and shared <= set(full.model_fields), shared - set(full.model_fields)
    for name in shared:  # the same field: its type is the full model's
        assert mcp.model_fields[name].annotation == full.model_fields[name].annotation, name
