"""What Loci shows on the wire: the one shape of each thing a surface answers with.

The HTTP API's responses, `loci … --json` and the MCP tools' structured results are built from
these models, so a document, a search hit or a citation has the same fields, under the same
names, wherever it is read. A surface that says less (an MCP tool, written for a model to read)
shows a subset derived from the full model (`loci.wire.subset`), never a copy kept by hand.
Request bodies stay with the API (`loci.api.schemas`). Import from the concept's module: this
package re-exports nothing.
"""
