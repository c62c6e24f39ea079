"""Web pages with boilerplate, built from real pages' structure, for fetch_web's extraction
(tests/unit/tools/test_fetch_web.py and bench/web_extraction.py).

Each page is a news/blog/docs/forum layout as such sites write it: a cookie banner, a site
header with a long menu, breadcrumbs, a "trending" sidebar, the article (headline, byline,
paragraphs, a link, a table, a sub-heading), a comments promo, a newsletter box with a
form, an advertisement and footer links, the chrome written as plain divs with the class
names real sites use. MAIN holds each page's sentences that must be kept, BOILERPLATE
those that must not.
"""

from __future__ import annotations

MAIN = {
    "news": [
        "Central bank raises rates by a quarter point to curb inflation.",
        "Economists had expected the move after three months of rising prices.",
        "The decision was unanimous, the bank said in a statement on Thursday.",
        "Mortgage holders will see higher payments from next month.",
    ],
    "blog_zh": [
        "今年我们把文档检索系统从关键词搜索迁移到了混合检索。",
        "迁移之后，长尾问题的召回率提升了大约百分之十五。",
        "最大的挑战是中文分词与英文词干化的结合。",
        "下面的表格列出了各阶段的耗时。",
    ],
    "docs": [
        "The connect function opens a session to the database server.",
        "Pass the timeout argument in seconds; the default is thirty.",
        "Connections are not thread-safe and must not be shared between threads.",
        "Call close when you are done to release the socket.",
    ],
    "forum": [
        "How do I read an Excel file without installing Office?",
        "You can use a library that parses the file format directly.",
        "That worked for me, thanks, the xls files open fine now.",
        "Remember that formulas only keep their last computed value.",
    ],
}
BOILERPLATE = [
    "Subscribe to our newsletter for daily updates",
    "Accept all cookies to continue browsing",
    "Copyright 2026 Example Media Group. All rights reserved",
    "Trending now: ten gadgets you must buy",
    "Sign in to comment on this story",
    "Related articles you may also like",
    "Privacy policy terms of service contact us",
    "Advertisement sponsored content from partners",
]
LINK = "https://example.org/ref1"


def page(kind: str) -> str:
    sentences = MAIN[kind]
    menu = "".join(f'<li><a href="/s{i}">Section {i} menu item</a></li>' for i in range(12))
    trending = "".join(f'<li><a href="/r{i}">{text}</a></li>' for i, text in enumerate(BOILERPLATE[3:6]))
    paragraphs = "".join(
        f"<p>{text} <a href='{LINK}'>source</a></p>" if i == 1 else f"<p>{text}</p>"
        for i, text in enumerate(sentences)
    )
    table = (
        "<table><tr><th>Stage</th><th>Seconds</th></tr><tr><td>Index</td><td>12.5</td></tr>"
        "<tr><td>Query</td><td>0.3</td></tr></table>"
    )
    return f"""<!doctype html><html><head><title>{kind} page</title><style>.x{{color:red}}</style>
<script>var tracking = "{BOILERPLATE[0]}";</script></head><body>
<div id="cookie-banner" class="cookie-consent"><p>{BOILERPLATE[1]}</p><button>OK</button></div>
<div class="site-header"><div class="logo">Example</div><div class="menu"><ul>{menu}</ul></div></div>
<div class="breadcrumbs"><a href="/">Home</a> &gt; <a href="/c">Category</a></div>
<div class="layout"><div class="sidebar widget"><h3>Trending</h3><ul>{trending}</ul></div>
<div class="content"><div class="post"><h1>{kind} headline</h1><div class="byline">By A. Writer, 2026-11-28</div>
<div class="entry-content">{paragraphs}{table}<h2>Details</h2><p>{sentences[-1]} More context follows here
with enough words to look like a paragraph of an article body.</p></div></div>
<div class="comments-promo"><p>{BOILERPLATE[4]}</p></div></div></div>
<div class="newsletter"><p>{BOILERPLATE[0]}</p><form><input name="e"></form></div>
<div class="ad"><p>{BOILERPLATE[7]}</p></div>
<div class="footer-links"><p>{BOILERPLATE[6]}</p><p>{BOILERPLATE[2]}</p></div></body></html>"""


def scores(text_of_page: dict[str, str]) -> dict[str, int]:
    """Main sentences kept, boilerplate sentences dropped, link targets and Markdown tables
    kept, over {kind: extracted text}."""
    kept = dropped = links = tables = 0
    for kind, text in text_of_page.items():
        flat = " ".join(text.split())
        kept += sum(sentence in flat for sentence in MAIN[kind])
        dropped += sum(sentence not in flat for sentence in BOILERPLATE)
        links += LINK in text
        tables += "| Index | 12.5 |" in text
    return {"main_kept": kept, "boilerplate_dropped": dropped, "links_kept": links, "tables_kept": tables}
