"""The brain graph (seed 002): Markdown pages and evidence with typed links and a timeline.

`document` is the format (frontmatter + compiled truth + timeline), `links` the link grammar and
the edges derived from it, `validate` the rules every write must pass. Nothing here touches the
database: these modules work on text, as seed 002's format toolkit does.
"""
