"""The ways out of a rendered page that do not go through routing, taken away from its scripts.

Playwright routing sees the page's HTTP requests (documents, scripts, fetch, XHR, images,
frames) and WebSockets. It does not see WebRTC (STUN/TURN over UDP to any IP literal, from the
browser's own sockets), WebTransport (QUIC), the Direct Sockets API, or a service worker's own
fetches. An article needs none of them, so an init script, run in every frame before the page's
own scripts, deletes their constructors and `navigator.serviceWorker`. A frame where the script
might not have run yet (a fresh about:blank child) is still covered by Chromium's flags
(`chromium`): this is the layer that makes the attempt fail loudly in the page, not the only one.
"""

from __future__ import annotations

import json

__all__ = ["CLOSED_APIS", "CLOSE_CHANNELS_SCRIPT"]

CLOSED_APIS: tuple[str, ...] = (
    "RTCPeerConnection",
    "webkitRTCPeerConnection",
    "RTCDataChannel",
    "RTCIceCandidate",
    "RTCIceTransport",
    "RTCDtlsTransport",
    "RTCSctpTransport",
    "RTCRtpSender",
    "RTCRtpReceiver",
    "RTCRtpTransceiver",
    "RTCSessionDescription",
    "RTCCertificate",
    "WebTransport",
    "WebTransportError",
    "TCPSocket",
    "TCPServerSocket",
    "UDPSocket",
    "ServiceWorker",
    "ServiceWorkerContainer",
    "ServiceWorkerRegistration",
)

# `delete` on the global removes an interface's binding; deleting the accessor from
# Navigator.prototype removes `navigator.serviceWorker` (service workers are also blocked by
# the browser context). Wrapped so a page's own code can never see a half-run script fail.
CLOSE_CHANNELS_SCRIPT = (
    "(() => {\n"
    f"  for (const name of {json.dumps(CLOSED_APIS)}) {{\n"
    "    try { delete globalThis[name]; } catch (e) {}\n"
    "  }\n"
    "  try { delete Navigator.prototype.serviceWorker; } catch (e) {}\n"
    "})();\n"
)
