"""The brain graph's health check as the HTTP API and the MCP server both show it: the fields of
`loci.graph.doctor.health`'s report, declared once for the two surfaces."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loci.wire.mirror import Mirror


class GraphFindingOut(Mirror):
    kind: str = Field(description="e.g. broken-link, orphan (see `loci brain doctor`)")
    severity: Literal["error", "warning"]
    document: str = Field(description="the page or evidence id it is about")
    message: str = Field(description="what is wrong and what to do about it")


class GraphDoctorOut(Mirror):
    brain: str
    documents: int = Field(description="pages and evidence checked")
    ok: bool = Field(description="true: no errors (warnings may remain)")
    errors: int
    warnings: int
    by_kind: dict[str, int] = Field(description="how many findings of each kind")
    findings: list[GraphFindingOut] = Field(description="the first `limit`, errors first")
    omitted: int = Field(description="findings left out by `limit`")
