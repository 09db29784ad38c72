"""The brain graph: Markdown pages and evidence with typed links and a timeline.

`document` is the format (frontmatter + compiled truth + timeline), `links` the link grammar and
the edges derived from it, `validate` the rules every write must pass. Nothing here touches the
database: these modules work on text, so a folder of files and the database can be checked
the same way.
"""
