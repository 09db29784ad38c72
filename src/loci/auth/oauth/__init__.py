"""Loci as an OAuth 2.1 authorization server for its own resources (the MCP endpoint and the
HTTP API), as the MCP authorization specification asks of a remote MCP server.

    resources.py   which URLs of this server a token can be for (RFC 8707, RFC 9728), and the
                   metadata documents clients discover it by (RFC 9728, RFC 8414)
    clients.py     registered applications (RFC 7591 dynamic registration)
    grants.py      the authorization code grant (PKCE S256 only), refresh with rotation,
                   revocation (RFC 7009)
    server.py      the Authlib authorization server that ties them to Loci's accounts
    consent.py     what a signed-in person is asked, and what their answer issues

The protocol itself is Authlib's; these modules say where things are kept and what they may
grant. The access token an application receives is an ordinary Loci API token (scope, brains,
listed with the person's other tokens and revocable the same way) that also names its client
and its resource; a refresh replaces its secret in place.
"""
