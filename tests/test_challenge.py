"""Bot-challenge detection on samples shaped like the real pages vendors serve."""

from __future__ import annotations

import time

import pytest

from loci.ingest.challenge import (
    ACCESS_DENIED,
    BROWSER_CHECK,
    CAPTCHA,
    CLOUDFLARE,
    DATADOME,
    ENABLE_JAVASCRIPT,
    IMPERVA,
    JAVASCRIPT_SHELL,
    PERIMETERX,
    detect_challenge,
)

CLOUDFLARE_JUST_A_MOMENT = """<!DOCTYPE html><html lang="en-US"><head>
<title>Just a moment...</title>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
<meta name="robots" content="noindex,nofollow">
<style>*{box-sizing:border-box;margin:0;padding:0}html{line-height:1.15}</style>
</head><body><div class="main-wrapper" role="main"><div class="main-content">
<h1 class="zone-name-title h1">example.com</h1>
<h2 class="h2" id="challenge-running">Verifying you are human. This may take a few seconds.</h2>
<div id="challenge-stage"></div>
<div id="challenge-body-text" class="core-msg spacer">example.com needs to review the security
of your connection before proceeding.</div></div></div>
<noscript><div class="h2"><span id="challenge-error-text">Enable JavaScript and cookies to
continue</span></div></noscript>
<script>(function(){window._cf_chl_opt={cvId: '3',cZone: "example.com",cType: 'managed',
cRay: '8a1b2c3d4e5f6071',cH: 'abc',cUPMDTk: "\\/?__cf_chl_tk=xyz"};
var cpo = document.createElement('script');
cpo.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8a1b2c3d4e5f6071';
document.getElementsByTagName('head')[0].appendChild(cpo);}());</script>
<div class="footer" role="contentinfo"><div class="footer-inner"><div class="clearfix
diagnostic-wrapper"><div class="ray-id">Ray ID: <code>8a1b2c3d4e5f6071</code></div></div>
<div class="text-center" id="footer-text">Performance &amp; security by Cloudflare</div>
</div></div></body></html>"""

CLOUDFLARE_ATTENTION_REQUIRED = """<!DOCTYPE html><html class="no-js" lang="en-US"><head>
<title>Attention Required! | Cloudflare</title><meta charset="UTF-8" />
<link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/cf.errors.css" /></head>
<body><div id="cf-wrapper"><div id="cf-error-details" class="cf-error-details-wrapper">
<div class="cf-wrapper cf-header cf-error-overview"><h1 data-translate="block_headline">Sorry,
you have been blocked</h1><h2 class="cf-subheadline">You are unable to access example.com</h2>
</div><div class="cf-section cf-wrapper"><div class="cf-columns two"><div class="cf-column">
<h2 data-translate="blocked_why_headline">Why have I been blocked?</h2><p>This website is
using a security service to protect itself from online attacks. The action you just performed
triggered the security solution. There are several actions that could trigger this block
including submitting a certain word or phrase, a SQL command or malformed data.</p></div>
<div class="cf-column"><h2>What can I do to resolve this?</h2><p>You can email the site owner
to let them know you were blocked. Please include what you were doing when this page came up
and the Cloudflare Ray ID found at the bottom of this page.</p></div></div></div>
<div class="cf-error-footer cf-wrapper"><p>Cloudflare Ray ID: <strong>8a1b2c3d4e5f6071</strong>
&bull; Your IP: 203.0.113.9 &bull; Performance &amp; security by Cloudflare</p></div>
</div></div></body></html>"""

CLOUDFLARE_LEGACY_IUAM = """<!DOCTYPE HTML><html lang="en-US"><head><meta charset="UTF-8" />
<title>Just a moment...</title></head><body><table width="100%" height="100%"><tr>
<td align="center" valign="middle"><div class="cf-browser-verification cf-im-under-attack">
<noscript><h1 data-translate="turn_on_js" style="color:#bd2426;">Please turn JavaScript on and
reload the page.</h1></noscript><div id="cf-content" style="display:none">
<h1><span data-translate="checking_browser">Checking your browser before accessing</span>
example.com.</h1><p>This process is automatic. Your browser will redirect to your requested
content shortly.</p><p>Please allow up to 5 seconds&hellip;</p></div>
<form class="challenge-form" id="challenge-form" action="/?__cf_chl_jschl_tk__=abc"
method="POST"><input type="hidden" name="r" value="xyz"/></form></div>
<div class="attribution">DDoS protection by <a href="https://www.cloudflare.com/">Cloudflare</a>
<br />Ray ID: 5f0c0d0e0f101112</div></td></tr></table></body></html>"""

GENERIC_BROWSER_CHECK = """<html><head><title>Checking your browser - example.org</title>
</head><body><h1>Checking your browser before accessing example.org</h1>
<p>This process is automatic. You will be redirected shortly.</p>
<script src="/verify.js"></script></body></html>"""

AKAMAI_ACCESS_DENIED = """<HTML><HEAD>
<TITLE>Access Denied</TITLE>
</HEAD><BODY>
<H1>Access Denied</H1>

You don't have permission to access "http&#58;&#47;&#47;www&#46;example&#46;com&#47;news&#47;"
on this server.<P>
Reference&#32;&#35;18&#46;5e2c1cb8&#46;1700000000&#46;1a2b3c4d
<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;5e2c1cb8&#46;1700000000</P>
</BODY>
</HTML>"""

GENERIC_ACCESS_DENIED = """<!doctype html><html><head><meta charset="utf-8">
<title>Example Corp</title></head><body><main><h1>Access denied</h1>
<p>Your request was blocked by our security rules. If you think this is a mistake, contact
support and quote request id 7f3a9.</p></main></body></html>"""

DATADOME_WALL = """<html lang="en"><head><title>example.com</title>
<style>#cmsg{animation: A 1.5s;}@keyframes A{0%{opacity:0;}99%{opacity:0;}100%{opacity:1;}}
</style></head><body style="margin:0"><p id="cmsg">Please enable JS and disable any ad blocker
</p><script data-cfasync="false">var dd={'rt':'c','cid':'AHrlqAAAAAMAsbYk','hsh':'2211F522',
't':'fe','s':44855,'e':'0b1f2e','host':'geo.captcha-delivery.com'}</script>
<script data-cfasync="false" src="https://ct.captcha-delivery.com/c.js"></script>
</body></html>"""

PERIMETERX_WALL = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Access to this page has been denied</title>
<script>window._pxAppId = 'PXabc123';window._pxJsClientSrc = '/abc123/init.js';
window._pxHostUrl = '/abc123/xhr';</script></head><body><section class="container">
<div class="page-title-wrapper"><h1 class="page-title">Before we continue...</h1></div>
<p class="page-subtitle">Press &amp; Hold to confirm you are a human (and not a bot).</p>
<div id="px-captcha"></div><p>Reference ID 3b5a2f90-7c11-11ee-b962-0242ac120002</p>
</section><script src="/abc123/captcha/captcha.js?a=c&u=3b5a2f90&v=&m=0"></script>
</body></html>"""

IMPERVA_WALL = """<html style="height:100%"><head><META NAME="ROBOTS" CONTENT="NOINDEX, NOFOLLOW">
<meta name="format-detection" content="telephone=no"><meta name="viewport"
content="initial-scale=1.0"></head><body style="margin:0px;height:100%">
<iframe id="main-iframe"
src="/_Incapsula_Resource?CWUDNSAI=24&xinfo=8-12345-0%200NNN&incident_id=0-1234"
frameborder=0 width="100%" height="100%" marginheight="0px" marginwidth="0px">Request
unsuccessful. Incapsula incident ID: 0-123456789012345</iframe></body></html>"""

GOOGLE_SORRY = """<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8">
<title>https://www.google.com/search?q=loci</title></head><body style="font-family: arial">
<div style="max-width:400px;"><hr noshade size="1" style="color:#ccc">
<script src="https://www.google.com/recaptcha/api.js" async defer></script>
<form id="captcha-form" action="index" method="post"><div id="recaptcha" class="g-recaptcha"
data-sitekey="6LfwuyUTAAAAAOAmoS0fdqijC2PbbdH4kjq62Y1b"></div></form><hr>
<div style="font-size:13px;"><b>About this page</b><br><br>Our systems have detected unusual
traffic from your computer network. This page checks to see if it's really you sending the
requests, and not a robot.</div></div></body></html>"""

AMAZON_CAPTCHA = """<!doctype html><html lang="en"><head><title>Amazon.com</title></head>
<body><div class="a-container a-padding-double-large"><div class="a-row a-text-center">
<img src="https://images-na.ssl-images-amazon.com/captcha/abc/Captcha_xyz.jpg"></div>
<h4>Enter the characters you see below</h4><p class="a-last">Sorry, we just need to make sure
you're not a robot. For best results, please make sure your browser is accepting cookies.</p>
<form method="get" action="/errors/validateCaptcha"><input type="text" id="captchacharacters"
name="field-keywords"><button type="submit">Continue shopping</button></form></div>
</body></html>"""

HCAPTCHA_WALL = """<!doctype html><html><head><title>One moment, please</title>
<script src="https://hcaptcha.com/1/api.js" async defer></script></head><body>
<h1>Please verify</h1><p>Complete the captcha to show you are human.</p>
<form method="post"><div class="h-captcha" data-sitekey="10000000-ffff-ffff-ffff-000000000001">
</div><button>Continue</button></form></body></html>"""

X_ENABLE_JAVASCRIPT = """<!DOCTYPE html><html dir="ltr" lang="en"><head>
<meta charset="utf-8" /><title>X</title><style>body{background:#fff}</style></head><body>
<div class="errorContainer"><h1>JavaScript is not available.</h1>
<p>We've detected that JavaScript is disabled in this browser. Please enable JavaScript or
switch to a supported browser to continue using x.com. You can see a list of supported browsers
in our Help Center.</p><p class="errorFooter"><a href="/tos">Terms of Service</a>
<a href="/privacy">Privacy Policy</a> <a href="/cookies">Cookie Policy</a> © 2024 X Corp.</p>
</div><script src="https://abs.twimg.com/responsive-web/client-web/main.js"></script>
</body></html>"""

CREATE_REACT_APP_SHELL = """<!doctype html><html lang="en"><head><meta charset="utf-8"/>
<title>Dashboard</title><script defer="defer" src="/static/js/main.8f2c1e.js"></script>
<link href="/static/css/main.1a2b3c.css" rel="stylesheet"></head><body>
<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>
</body></html>"""

SILENT_SPA_SHELL = """<!doctype html><html><head><meta charset="utf-8"><title>Acme</title>
<script type="module" src="/assets/index-4f3a.js"></script>
<script src="/assets/vendor-9c1d.js"></script></head>
<body><div id="app"></div></body></html>"""

PIXEL_NOSCRIPT_SHELL = """<!doctype html><html><head><title>Shop</title></head><body>
<noscript><img height="1" width="1" style="display:none"
src="https://www.facebook.com/tr?id=123&ev=PageView&noscript=1"/></noscript>
<div id="__nuxt"></div><script>window.__NUXT__={}</script></body></html>"""


def _paragraphs(count: int) -> str:
    sentence = (
        "Memory palaces work because spatial memory is old and strong, and a walk through "
        "a familiar house gives every fact a place to wait until it is needed again. "
    )
    return "\n".join(f"<p>{sentence * 3}</p>" for _ in range(count))


CLOUDFLARE_JSD_SENSOR = """<script>(function(){function c(){var b=a.contentDocument||
a.contentWindow.document;if(b){var d=b.createElement('script');
d.innerHTML="window.__CF$cv$params={r:'8a1b2c3d4e5f6071',t:'MTcwMDAwMDAwMC4wMDAwMDA='};
var a=document.createElement('script');a.nonce='';
a.src='/cdn-cgi/challenge-platform/scripts/jsd/main.js';
document.getElementsByTagName('head')[0].appendChild(a);";b.getElementsByTagName('head')[0]
.appendChild(d)}}var a=document.createElement('iframe');a.height=1;a.width=1;
document.body.appendChild(a);c()})();</script>"""

LONG_ARTICLE = f"""<!doctype html><html><head><title>How memory palaces work</title>
<script src="/js/analytics.js"></script></head><body><article><h1>How memory palaces work</h1>
{_paragraphs(12)}
<p>Some sites now show a CAPTCHA before every article and ask you to verify you are human;
others answer "Access denied" to anything that is not a browser. Please enable JavaScript is
the most common sentence on the web, and no help at all to a reader.</p>
</article><footer><p>Please enable JavaScript to view the comments powered by Disqus.</p>
<noscript>Please enable JavaScript to view the
<a href="https://disqus.com/?ref_noscript">comments powered by Disqus.</a></noscript>
</footer>{CLOUDFLARE_JSD_SENSOR}</body></html>"""

SHORT_BLOG_NOTE = f"""<!doctype html><html><head><title>Note: moving the wiki</title></head>
<body><header><a href="/">Home</a> <a href="/about">About</a></header><main>
<h1>Moving the wiki</h1><p>We moved the team wiki to the new server on Monday. Old links
redirect for a month; after that, search for the page title. The attachments kept their
names, so citations in old notes still resolve. Ask Ana if a page went missing.</p></main>
<div id="disqus_thread"></div><noscript>Please enable JavaScript to view the comments.
</noscript><script src="https://example.disqus.com/embed.js"></script>
{CLOUDFLARE_JSD_SENSOR}</body></html>"""

CONTACT_FORM_WITH_RECAPTCHA = f"""<!doctype html><html><head><title>Contact us</title>
<script src="https://www.google.com/recaptcha/api.js" async defer></script></head><body>
<nav><a href="/">Home</a> <a href="/docs">Documentation</a> <a href="/blog">Blog</a></nav>
<h1>Contact us</h1>{_paragraphs(2)}
<form method="post"><input name="email"><textarea name="message"></textarea>
<div class="g-recaptcha" data-sitekey="abc"></div><button>Send</button></form>
<footer>© 2024 Example Ltd. Registered in England. All rights reserved.</footer></body></html>"""

ARTICLE_TITLED_ACCESS_DENIED = f"""<!doctype html><html><head>
<title>Access denied: how banks lock customers out of their own accounts</title></head><body>
<h1>Access denied: how banks lock customers out of their own accounts</h1>
{_paragraphs(2)}</body></html>"""

CHINESE_ARTICLE = (
    "<!doctype html><html><head><title>记忆宫殿</title>"
    '<script src="/a.js"></script><script src="/b.js"></script></head><body><article>'
    + "<p>" + "记忆宫殿是一种古老的记忆方法，利用空间记忆来保存信息。" * 40 + "</p>"
    + "</article><noscript>请启用JavaScript</noscript></body></html>"
)  # fmt: skip

NGINX_FORBIDDEN = """<html><head><title>403 Forbidden</title></head><body>
<center><h1>403 Forbidden</h1></center><hr><center>nginx/1.24.0</center></body></html>"""

CLOUDFLARE_521 = """<!DOCTYPE html><html lang="en-US"><head>
<title>example.com | 521: Web server is down</title></head><body><div id="cf-wrapper">
<div id="cf-error-details" class="p-0"><header class="mx-auto pt-10 lg:pt-6 lg:px-8 w-240">
<h1 class="inline-block sm:block sm:mb-2 font-light text-60">Web server is down</h1>
<span class="inline-block">Error code 521</span></header><div class="my-8 bg-gradient-gray">
<p>The web server is not returning a connection. As a result, the web page is not
displaying.</p><h2>What can I do?</h2><p>If you are a visitor of this website: please try
again in a few minutes.</p><p>If you are the owner of this website: contact your hosting
provider letting them know your web server is not responding.</p></div>
<p>Cloudflare Ray ID: <strong>8a1b2c3d4e5f6071</strong></p></div></div></body></html>"""


@pytest.mark.parametrize(
    ("status", "headers", "html", "expected"),
    [
        pytest.param(503, {"Server": "cloudflare"}, CLOUDFLARE_JUST_A_MOMENT, CLOUDFLARE,
                     id="cloudflare-just-a-moment"),
        pytest.param(200, {}, CLOUDFLARE_JUST_A_MOMENT, CLOUDFLARE, id="cloudflare-on-200"),
        pytest.param(403, {"CF-Mitigated": "challenge"}, "<html><body></body></html>",
                     CLOUDFLARE, id="cloudflare-header-alone"),
        pytest.param(403, {"Server": "cloudflare"}, CLOUDFLARE_ATTENTION_REQUIRED, CLOUDFLARE,
                     id="cloudflare-attention-required"),
        pytest.param(503, {}, CLOUDFLARE_LEGACY_IUAM, CLOUDFLARE, id="cloudflare-legacy"),
        pytest.param(503, {}, GENERIC_BROWSER_CHECK, BROWSER_CHECK, id="browser-check"),
        pytest.param(403, {"Server": "AkamaiGHost"}, AKAMAI_ACCESS_DENIED, ACCESS_DENIED,
                     id="akamai"),
        pytest.param(200, {}, AKAMAI_ACCESS_DENIED, ACCESS_DENIED, id="akamai-on-200"),
        pytest.param(403, {}, GENERIC_ACCESS_DENIED, ACCESS_DENIED, id="access-denied"),
        pytest.param(403, {"X-DataDome": "protected"}, DATADOME_WALL, DATADOME, id="datadome"),
        pytest.param(403, {}, PERIMETERX_WALL, PERIMETERX, id="perimeterx"),
        pytest.param(200, {}, IMPERVA_WALL, IMPERVA, id="imperva"),
        pytest.param(429, {}, GOOGLE_SORRY, CAPTCHA, id="recaptcha-sorry-page"),
        pytest.param(503, {}, AMAZON_CAPTCHA, CAPTCHA, id="amazon-captcha"),
        pytest.param(200, {}, HCAPTCHA_WALL, CAPTCHA, id="hcaptcha"),
        pytest.param(200, {}, X_ENABLE_JAVASCRIPT, ENABLE_JAVASCRIPT, id="x-enable-js"),
        pytest.param(200, {}, CREATE_REACT_APP_SHELL, ENABLE_JAVASCRIPT, id="cra-noscript"),
        pytest.param(200, {}, SILENT_SPA_SHELL, JAVASCRIPT_SHELL, id="silent-spa"),
        pytest.param(200, {}, PIXEL_NOSCRIPT_SHELL, JAVASCRIPT_SHELL, id="pixel-noscript"),
    ],
)  # fmt: skip
def test_challenges_are_recognised(
    status: int, headers: dict[str, str], html: str, expected: str
) -> None:
    assert detect_challenge(status, headers, html) == expected


@pytest.mark.parametrize(
    ("status", "headers", "html"),
    [
        pytest.param(200, {"Server": "cloudflare"}, LONG_ARTICLE, id="long-article"),
        pytest.param(200, {"Server": "cloudflare"}, SHORT_BLOG_NOTE, id="short-note-disqus"),
        pytest.param(200, {}, CONTACT_FORM_WITH_RECAPTCHA, id="contact-form-recaptcha"),
        pytest.param(200, {}, ARTICLE_TITLED_ACCESS_DENIED, id="title-mentions-access-denied"),
        pytest.param(200, {}, CHINESE_ARTICLE, id="cjk-article-with-scripts"),
        pytest.param(403, {}, NGINX_FORBIDDEN, id="plain-403"),
        pytest.param(521, {"Server": "cloudflare"}, CLOUDFLARE_521, id="cloudflare-521"),
        pytest.param(200, {}, "<html><body><p>Hello.</p></body></html>", id="tiny-static"),
        pytest.param(200, {}, "just some text, not even HTML", id="plain-text"),
        pytest.param(200, {}, "", id="empty"),
    ],
)  # fmt: skip
def test_real_pages_are_not_flagged(status: int, headers: dict[str, str], html: str) -> None:
    assert detect_challenge(status, headers, html) is None


def test_long_article_is_not_flagged_even_on_a_blocking_status() -> None:
    # A 503 during maintenance can still carry the whole article; its words decide.
    assert detect_challenge(503, {}, LONG_ARTICLE) is None


def test_markers_only_count_on_short_pages() -> None:
    """The same Cloudflare marker condemns a bare page but not an article carrying it."""
    marker = "<script>window._cf_chl_opt={cvId:'3'}</script>"
    bare = f"<html><head><title>Example</title></head><body>{marker}</body></html>"
    padded = bare.replace("</body>", _paragraphs(10) + "</body>")
    assert detect_challenge(200, {}, bare) == CLOUDFLARE
    assert detect_challenge(200, {}, padded) is None


def test_huge_page_is_scanned_quickly() -> None:
    html = "<html><body>" + _paragraphs(20_000) + "</body></html>"  # ~9 MB
    started = time.monotonic()
    assert detect_challenge(200, {}, html) is None
    assert time.monotonic() - started < 1.0


def test_malformed_markup_does_not_raise() -> None:
    html = "<html><![if !IE]><body><![endif]><p>Hi</p><!DOCTYPE x [ <!ENTITY a 'b'> ]></html>"
    assert detect_challenge(200, {}, html) is None
