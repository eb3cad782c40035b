//! The first filter on an app's HTML: does it name a network address? The
//! HTML is tokenized as a browser tokenizes it (html5ever: character
//! references decoded, `<script>` and `<style>` read as raw text) and every
//! style sheet and `style` attribute as CSS (cssparser: escapes decoded), so
//! `h&#116;tp:`, `jav&Tab;ascript:`, `url( //x )` and `\68 ttp:` are seen as
//! what the browser would see. The sandbox and its policy are the guard;
//! this tells an agent early that its app cannot reach the network.

use std::cell::RefCell;

use cssparser::{Parser, Token as CssToken};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts};

/// Schemes that reach another machine: the web's, and WebRTC's servers.
const NETWORK_SCHEMES: [&str; 10] = ["http:", "https:", "ws:", "wss:", "ftp:", "file:", "stun:", "stuns:", "turn:", "turns:"];

/// The first thing in `html` that names a network address, if any: a
/// network scheme anywhere (an attribute, a script, text), a
/// protocol-relative `//host` where a URL goes (an attribute that takes
/// one, `url(…)`, `@import`, `srcset`), or a meta refresh.
pub fn external_reference(html: &str) -> Option<String> {
    scan(html, Sink { strict: true, ..Sink::default() })
}

/// The first thing in `html` that would load from the network as markup:
/// an attribute that takes a URL naming one, a style sheet's `url(…)` or
/// `@import`, a meta refresh. What scripts and text say is not read: a
/// connected server's app carries its framework inline, whose strings name
/// addresses it never loads (schema ids, licence comments), and only the
/// sandbox's policy (no network at all) can stop what a script does.
pub fn external_load(html: &str) -> Option<String> {
    scan(html, Sink::default())
}

fn scan(html: &str, sink: Sink) -> Option<String> {
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.found.into_inner()
}

#[derive(Default)]
struct Sink {
    /// Whether every scheme anywhere counts (an agent's app), or only what
    /// markup loads (a connected server's).
    strict: bool,
    found: RefCell<Option<String>>,
    /// The raw text element being read (`script`, `style`…), if any.
    raw: RefCell<Option<String>>,
}

impl Sink {
    fn report(&self, what: impl FnOnce() -> Option<String>) {
        if self.found.borrow().is_some() {
            return;
        }
        if let Some(found) = what() {
            *self.found.borrow_mut() = Some(found);
        }
    }
}

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        match token {
            Token::TagToken(tag) if tag.kind == TagKind::StartTag => {
                let name = tag.name.to_string();
                for attr in &tag.attrs {
                    let (attr_name, value) = (attr.name.local.to_string(), attr.value.to_string());
                    if self.strict {
                        self.report(|| scheme_in(&value));
                    }
                    self.report(|| attribute_url(&attr_name, &value));
                    if self.strict && attr_name.starts_with("on") {
                        self.report(|| quoted_host(&value));
                    }
                    if attr_name == "style" {
                        self.report(|| css(&value));
                    }
                }
                let refresh =
                    name == "meta" && tag.attrs.iter().any(|a| &*a.name.local == "http-equiv" && a.value.trim().eq_ignore_ascii_case("refresh"));
                if refresh {
                    self.report(|| Some("a meta refresh".to_owned()));
                }
                let raw = match name.as_str() {
                    "script" => Some(RawKind::ScriptData),
                    "style" | "xmp" | "iframe" | "noembed" | "noframes" => Some(RawKind::Rawtext),
                    "title" | "textarea" => Some(RawKind::Rcdata),
                    _ => None,
                };
                if let Some(kind) = raw {
                    *self.raw.borrow_mut() = Some(name);
                    return TokenSinkResult::RawData(kind);
                }
            }
            Token::TagToken(_) => {
                *self.raw.borrow_mut() = None;
            }
            Token::CharacterTokens(text) => {
                let text = text.to_string();
                if self.strict {
                    self.report(|| scheme_in(&text));
                }
                match self.raw.borrow().as_deref() {
                    Some("style") => self.report(|| css(&text)),
                    Some("script") if self.strict => self.report(|| quoted_host(&text)),
                    _ => {}
                }
            }
            Token::CommentToken(text) if self.strict => self.report(|| scheme_in(&text)),
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// `value` as a browser reads a URL: ASCII whitespace and controls dropped
/// (browsers drop tabs and newlines anywhere in a URL), lowercased.
fn squeezed(value: &str) -> String {
    value.chars().filter(|c| !c.is_whitespace() && !c.is_control()).flat_map(char::to_lowercase).collect()
}

/// A network scheme anywhere in `text`.
fn scheme_in(text: &str) -> Option<String> {
    let normal = squeezed(text);
    NETWORK_SCHEMES.iter().find_map(|scheme| normal.find(scheme).map(|at| excerpt(&normal, at)))
}

/// A string in script that starts with two slashes (`'//host/…'`): a
/// protocol-relative address. Comments and slashes inside a string are not.
fn quoted_host(script: &str) -> Option<String> {
    let normal = squeezed(script);
    ["'//", "\"//", "`//", "'\\\\", "\"\\\\", "`\\\\"].iter().find_map(|lead| normal.find(lead).map(|at| excerpt(&normal, at)))
}

/// A URL that leaves the document: a network scheme, or a path that
/// starts with two slashes (either way round), which names another host.
fn leaves(url: &str) -> Option<String> {
    let normal = squeezed(url);
    let network = NETWORK_SCHEMES.iter().any(|s| normal.starts_with(s));
    let host_relative = ["//", "\\\\", "/\\", "\\/"].iter().any(|lead| normal.starts_with(lead));
    (network || host_relative).then(|| excerpt(&normal, 0))
}

/// An attribute that takes a URL (or a list of them), naming one that
/// leaves the document.
fn attribute_url(name: &str, value: &str) -> Option<String> {
    match name {
        "srcset" | "imagesrcset" => value.split(',').find_map(|candidate| leaves(candidate.split_whitespace().next().unwrap_or(""))),
        "src" | "href" | "action" | "formaction" | "poster" | "data" | "background" | "cite" | "longdesc" | "ping" | "manifest" | "codebase"
        | "archive" | "icon" | "lowsrc" | "dynsrc" | "xlink:href" | "itemtype" | "profile" => {
            value.split_whitespace().find_map(leaves).or_else(|| leaves(value))
        }
        _ => None,
    }
}

/// A style sheet (or a `style` attribute) naming an address that leaves
/// the document: in `url(…)`, `@import`, or any string.
fn css(text: &str) -> Option<String> {
    let mut parser = Parser::new(text);
    let mut found = None;
    css_tokens(&mut parser, 0, &mut found);
    found
}

/// Reads every token (a nested block is read to its end, as cssparser
/// requires), noting the first address that leaves.
fn css_tokens(parser: &mut Parser<'_>, depth: usize, found: &mut Option<String>) {
    while let Ok(token) = parser.next_including_whitespace_and_comments() {
        let nested = match token {
            CssToken::UnquotedUrl(url) | CssToken::QuotedString(url) => {
                if found.is_none() {
                    *found = leaves(url).or_else(|| scheme_in(url));
                }
                false
            }
            CssToken::Ident(text) | CssToken::AtKeyword(text) => {
                if found.is_none() {
                    *found = scheme_in(text);
                }
                false
            }
            CssToken::Function(_) | CssToken::ParenthesisBlock | CssToken::SquareBracketBlock | CssToken::CurlyBracketBlock => true,
            _ => false,
        };
        if !nested {
            continue;
        }
        // Nesting is bounded: a hostile sheet cannot exhaust the stack,
        // and what it hides that deep is refused unread.
        if depth >= 32 {
            found.get_or_insert_with(|| "a style sheet nested too deep to read".to_owned());
            continue;
        }
        let _: Result<(), cssparser::ParseError<()>> = parser.parse_nested_block(|p| {
            css_tokens(p, depth + 1, found);
            Ok(())
        });
    }
}

fn excerpt(s: &str, at: usize) -> String {
    s[at..].chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::{external_load, external_reference};

    #[test]
    fn what_markup_loads_is_found_and_what_scripts_say_is_not() {
        for html in [
            "<img src=\"http://x.example/a.png\">",
            "<script src=\"//cdn.example/x.js\"></script>",
            "<link rel=stylesheet href=\"h&#116;tps://x.example/s.css\">",
            "<style>@import url( //x.example/s.css );</style>",
            "<div style=\"background:url('https://x.example/a.png')\"></div>",
            "<meta http-equiv=refresh content=\"0;url=https://x.example\">",
            "<img srcset=\"a.png 1x, https://x.example/b.png 2x\">",
            "<form action=\"https://x.example/steal\"></form>",
        ] {
            assert!(external_load(html).is_some(), "{html}");
        }
        for html in [
            "<script>const schema = {\"$schema\": \"https://json-schema.org/draft/2020-12/schema\"}; new URL('https://github.com/x')</script>",
            "<!-- licence: https://www.chartjs.org -->",
            "<p>see https://modelcontextprotocol.io/</p>",
            "<input value=\"https://modelcontextprotocol.io/\">",
        ] {
            assert_eq!(external_load(html), None, "{html}");
            assert!(external_reference(html).is_some(), "the strict filter still refuses {html}");
        }
    }

    #[test]
    fn addresses_are_found_as_the_browser_reads_them() {
        for html in [
            "<img src=\"http://x.example/a.png\">",
            "<a href=\"h&#116;tp://x\">",
            "<a href=\"ht&Tab;tp://x\">",
            "<a href=\"&#x68;&#x74;&#x74;&#x70;&colon;//x\">",
            "<img src=//x.example/a.png>",
            "<img src=\"/\\x.example\">",
            "<img srcset=\"a.png 1x, //x/b.png 2x\">",
            "<style>body{background:url( //x/a.png )}</style>",
            "<style>@import \"//x/a.css\";</style>",
            "<style>b{background:url(\\68 ttp://x)}</style>",
            "<div style=\"background-image:url(&#x2F;&#x2F;x)\">",
            "<script>const s = 'stun:relay.example:3478';</script>",
            "<script>new RTCPeerConnection({iceServers:[{urls:'turns:x'}]})</script>",
            "<meta http-equiv=refresh content=\"0;url=/x\">",
            "<form action=\"https://x/post\">",
            "<p>see wss://x</p>",
        ] {
            assert!(external_reference(html).is_some(), "missed: {html}");
        }
        for html in [
            "<p>an app</p><script>const u = 'ht' + 'tp:';</script>",
            "<a href=\"#section\">down</a><a href=\"/local\">",
            "<img src=\"data:image/png;base64,AAAA\">",
            "<style>b{background:url(data:image/png;base64,AA)}</style>",
            "<p>http is a protocol</p>",
        ] {
            assert_eq!(external_reference(html), None, "refused: {html}");
        }
    }

    #[test]
    fn deep_css_is_bounded() {
        let deep = format!("<style>{}</style>", "a(".repeat(10_000));
        assert!(external_reference(&deep).is_some());
    }
}
