"""Graph pages as files (front matter and Markdown), as `loci graph export` writes them and
`loci graph import` reads them: a person, a company and an evidence note that cite each other."""

from __future__ import annotations

ANA = """---
id: ana-lopez
kind: page
type: person
folder: people
status: active
title: Ana López
aliases:
- Ana
relations:
- type: works_at
  target: acme
created: 2026-03-04T10:00:00Z
---

Ana leads the garden [[evidence:ev-kickoff|kickoff notes]].

## Timeline

- **2026-03-04** Kickoff held; Ana leads. — [[source:file:12]] `ev-6799a5c58a`
"""

ACME = """---
id: acme
kind: page
type: company
folder: companies
status: draft
title: Acme
custom_key: kept as it is
---

A seed company. Employs [[page:ana-lopez|Ana]].
"""

KICKOFF = """---
id: ev-kickoff
kind: evidence
type: meeting
folder: evidence/meetings
status: active
title: Kickoff notes
sources: [file:12]
---

We met; Ana leads.
"""
