"""Single sign-on with OpenID Connect identity providers.

    provider.py   a provider as configured, its discovery document and signing keys
    flow.py       the authorization code flow with PKCE and a nonce, and the ID token check
                  (signature against the provider's keys, issuer, audience, nonce, expiry)
    people.py     who a verified ID token is in Loci: a linked identity, a new user, or (when
                  the administrator allows it) an existing user with the same verified e-mail;
                  group claims to admin rights and brain roles

The protocol is Authlib's (with joserfc for the JOSE part); nothing here checks a JWT by hand.
Loci decides last: a user disabled in Loci does not sign in, whatever the provider says.
"""
