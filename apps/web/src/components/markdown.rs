//! Markdown (a dashboard's text panel) drawn as elements with text nodes:
//! raw HTML in the source is shown as text, links are not followed, images
//! are their alt text. Nothing from the source becomes markup.

use leptos::prelude::*;
use pulldown_cmark::{Event, HeadingLevel, Parser, Tag};

enum Node {
    Element(&'static str, Vec<Node>),
    Text(String),
}

/// Elements nest at most this deep; what a source nests deeper is drawn
/// flat inside the deepest, so no source exhausts the page's stack (the
/// tree is drawn and dropped recursively).
const MAX_DEPTH: usize = 16;

pub fn render(source: &str) -> AnyView {
    let mut stack: Vec<(&'static str, Vec<Node>)> = vec![("div", Vec::new())];
    // Elements opened past MAX_DEPTH, whose ends are to be skipped.
    let mut flattened = 0usize;
    for event in Parser::new(source) {
        match event {
            Event::Start(_) if stack.len() > MAX_DEPTH => flattened += 1,
            Event::Start(tag) => stack.push((element_of(&tag), Vec::new())),
            Event::End(_) if flattened > 0 => flattened -= 1,
            Event::End(_) => {
                if stack.len() > 1 {
                    let (name, children) = stack.pop().expect("an open element");
                    stack.last_mut().expect("the root").1.push(Node::Element(name, children));
                }
            }
            Event::Text(t) | Event::Code(t) | Event::Html(t) | Event::InlineHtml(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                stack.last_mut().expect("the root").1.push(Node::Text(t.into_string()));
            }
            Event::SoftBreak => stack.last_mut().expect("the root").1.push(Node::Text(" ".into())),
            Event::HardBreak => stack.last_mut().expect("the root").1.push(Node::Element("br", vec![])),
            Event::Rule => stack.last_mut().expect("the root").1.push(Node::Element("hr", vec![])),
            Event::TaskListMarker(done) => stack.last_mut().expect("the root").1.push(Node::Text(if done { "[x] " } else { "[ ] " }.into())),
            Event::FootnoteReference(r) => stack.last_mut().expect("the root").1.push(Node::Text(format!("[{r}]"))),
        }
    }
    while stack.len() > 1 {
        let (name, children) = stack.pop().expect("an open element");
        stack.last_mut().expect("the root").1.push(Node::Element(name, children));
    }
    let (_, children) = stack.pop().expect("the root");
    view! { <div class="markdown">{children.into_iter().map(draw).collect_view()}</div> }.into_any()
}

/// Headings in a panel start at level 3: every item of the timeline (a
/// dashboard among them) has a level-2 title.
fn element_of(tag: &Tag) -> &'static str {
    match tag {
        Tag::Paragraph => "p",
        Tag::Heading { level, .. } => match level {
            HeadingLevel::H1 | HeadingLevel::H2 => "h3",
            HeadingLevel::H3 => "h4",
            _ => "h5",
        },
        Tag::BlockQuote(_) => "blockquote",
        Tag::CodeBlock(_) => "pre",
        Tag::List(Some(_)) => "ol",
        Tag::List(None) => "ul",
        Tag::Item => "li",
        Tag::Emphasis => "em",
        Tag::Strong => "strong",
        Tag::Strikethrough => "s",
        Tag::Table(_) => "table",
        Tag::TableHead => "thead",
        Tag::TableRow => "tr",
        Tag::TableCell => "td",
        _ => "span",
    }
}

fn draw(node: Node) -> AnyView {
    match node {
        Node::Text(t) => t.into_any(),
        Node::Element(name, children) => {
            let inner = children.into_iter().map(draw).collect_view();
            match name {
                "p" => view! { <p>{inner}</p> }.into_any(),
                "h3" => view! { <h3>{inner}</h3> }.into_any(),
                "h4" => view! { <h4>{inner}</h4> }.into_any(),
                "h5" => view! { <h5>{inner}</h5> }.into_any(),
                "blockquote" => view! { <blockquote>{inner}</blockquote> }.into_any(),
                "pre" => view! { <pre><code>{inner}</code></pre> }.into_any(),
                "ol" => view! { <ol>{inner}</ol> }.into_any(),
                "ul" => view! { <ul>{inner}</ul> }.into_any(),
                "li" => view! { <li>{inner}</li> }.into_any(),
                "em" => view! { <em>{inner}</em> }.into_any(),
                "strong" => view! { <strong>{inner}</strong> }.into_any(),
                "s" => view! { <s>{inner}</s> }.into_any(),
                "table" => view! { <table>{inner}</table> }.into_any(),
                "thead" => view! { <thead>{inner}</thead> }.into_any(),
                "tr" => view! { <tr>{inner}</tr> }.into_any(),
                "td" => view! { <td>{inner}</td> }.into_any(),
                "br" => view! { <br/> }.into_any(),
                "hr" => view! { <hr/> }.into_any(),
                _ => view! { <span>{inner}</span> }.into_any(),
            }
        }
    }
}
