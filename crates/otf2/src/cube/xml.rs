//! The small part of XML that CUBE anchors use: escaping for the writer, and a non-recursive
//! parser into a flat element arena for the reader (no DTDs, no namespaces).

use std::io;

/// The five entities cubew (`cube_services_escape_to_xml__`) and cubelib
/// (`services::escapeToXML`) use: `& < > ' "`. Nothing else is escaped, so characters XML 1.0
/// cannot carry are rejected by [`check_text`] before writing.
pub(super) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\'' => out.push_str("&apos;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `text` survives a trip through an XML parser unchanged: no control characters but
/// tab and newline in element text, none at all in attribute values (parsers normalise
/// whitespace there), no carriage return (parsers turn it into a newline) and none of the
/// noncharacters XML 1.0 forbids.
pub(super) fn check_text(
    text: &str,
    in_attribute: bool,
    what: &dyn Fn() -> String,
) -> io::Result<()> {
    for c in text.chars() {
        let allowed = match c {
            '\t' | '\n' => !in_attribute,
            '\u{0}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}' => false,
            _ => true,
        };
        if !allowed {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} contains the character U+{:04X}, which a CUBE anchor cannot carry",
                    what(),
                    c as u32
                ),
            ));
        }
    }
    Ok(())
}

/// One element of a parsed document.
#[derive(Debug, Default)]
pub(super) struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    /// Character data directly inside this element, concatenated.
    pub text: String,
    pub children: Vec<usize>,
}

/// A parsed document: `elements[0]` is the root.
#[derive(Debug)]
pub(super) struct Document {
    pub elements: Vec<Element>,
}

impl Document {
    pub fn root(&self) -> &Element {
        &self.elements[0]
    }

    pub fn children<'a>(
        &'a self,
        element: &'a Element,
    ) -> impl Iterator<Item = (usize, &'a Element)> + 'a {
        element
            .children
            .iter()
            .map(move |&i| (i, &self.elements[i]))
    }

    /// The children of `element` named `name`.
    pub fn named<'a>(
        &'a self,
        element: &'a Element,
        name: &'a str,
    ) -> impl Iterator<Item = (usize, &'a Element)> + 'a {
        self.children(element).filter(move |(_, e)| e.name == name)
    }

    /// The first child of `element` named `name`.
    pub fn first<'a>(&'a self, element: &'a Element, name: &str) -> Option<&'a Element> {
        element
            .children
            .iter()
            .map(|&i| &self.elements[i])
            .find(|e| e.name == name)
    }

    /// The text of the first child named `name`, or "" when there is none.
    pub fn child_text<'a>(&'a self, element: &'a Element, name: &str) -> &'a str {
        self.first(element, name).map_or("", |e| e.text.as_str())
    }
}

impl Element {
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn bad(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn starts_with(&self, prefix: &str) -> bool {
        self.rest().starts_with(prefix)
    }

    fn skip_whitespace(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start_matches([' ', '\t', '\r', '\n']).len();
    }

    /// Moves past the next `end`, failing with `what` when there is none.
    fn skip_past(&mut self, end: &str, what: &str) -> io::Result<&'a str> {
        let rest = self.rest();
        let at = rest
            .find(end)
            .ok_or_else(|| bad(format!("anchor.xml: unterminated {what}")))?;
        self.pos += at + end.len();
        Ok(&rest[..at])
    }

    fn name(&mut self) -> io::Result<&'a str> {
        let rest = self.rest();
        let len = rest
            .find(|c: char| c.is_whitespace() || matches!(c, '/' | '>' | '=' | '<'))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(bad(format!(
                "anchor.xml: expected a name at byte {}",
                self.pos
            )));
        }
        self.pos += len;
        Ok(&rest[..len])
    }
}

/// Replaces the five named entities and numeric character references.
fn unescape(raw: &str, out: &mut String) -> io::Result<()> {
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let semi = after
            .find(';')
            .filter(|&s| s <= 12)
            .ok_or_else(|| bad("anchor.xml: unterminated entity reference"))?;
        let entity = &after[..semi];
        let c = match entity {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "apos" => '\'',
            "quot" => '"',
            _ => {
                let code = if let Some(hex) = entity.strip_prefix("#x") {
                    u32::from_str_radix(hex, 16).ok()
                } else if let Some(dec) = entity.strip_prefix('#') {
                    dec.parse::<u32>().ok()
                } else {
                    None
                };
                code.and_then(char::from_u32)
                    .ok_or_else(|| bad(format!("anchor.xml: unknown entity &{entity};")))?
            }
        };
        out.push(c);
        rest = &after[semi + 1..];
    }
    out.push_str(rest);
    Ok(())
}

/// Parses `text` into a [`Document`]. Comments, processing instructions and CDATA sections are
/// understood; a document type declaration is refused (CUBE anchors have none, and entity
/// definitions are a way to make a small file expand into a huge one).
pub(super) fn parse(text: &str) -> io::Result<Document> {
    let mut cursor = Cursor { text, pos: 0 };
    let mut elements: Vec<Element> = Vec::new();
    // Open elements, innermost last.
    let mut open: Vec<usize> = Vec::new();
    let mut root_done = false;
    loop {
        let rest = cursor.rest();
        if rest.is_empty() {
            break;
        }
        if !rest.starts_with('<') {
            let len = rest.find('<').unwrap_or(rest.len());
            let raw = &rest[..len];
            cursor.pos += len;
            match open.last() {
                Some(&current) => unescape(raw, &mut elements[current].text)?,
                None if raw.trim().is_empty() => {}
                None => return Err(bad("anchor.xml: text outside the root element")),
            }
            continue;
        }
        if cursor.starts_with("<?") {
            cursor.skip_past("?>", "processing instruction")?;
        } else if cursor.starts_with("<!--") {
            cursor.skip_past("-->", "comment")?;
        } else if cursor.starts_with("<![CDATA[") {
            cursor.pos += "<![CDATA[".len();
            let data = cursor.skip_past("]]>", "CDATA section")?;
            let current = *open
                .last()
                .ok_or_else(|| bad("anchor.xml: CDATA outside the root element"))?;
            elements[current].text.push_str(data);
        } else if cursor.starts_with("<!") {
            return Err(bad(
                "anchor.xml: document type declarations are not supported",
            ));
        } else if cursor.starts_with("</") {
            cursor.pos += 2;
            let name = cursor.name()?;
            cursor.skip_whitespace();
            if !cursor.starts_with(">") {
                return Err(bad(format!("anchor.xml: malformed end tag </{name}")));
            }
            cursor.pos += 1;
            let current = open
                .pop()
                .ok_or_else(|| bad(format!("anchor.xml: end tag </{name}> without a start tag")))?;
            if elements[current].name != name {
                return Err(bad(format!(
                    "anchor.xml: <{}> closed by </{name}>",
                    elements[current].name
                )));
            }
            if open.is_empty() {
                root_done = true;
            }
        } else {
            cursor.pos += 1;
            if root_done {
                return Err(bad("anchor.xml: more than one root element"));
            }
            let name = cursor.name()?.to_string();
            let mut attributes = Vec::new();
            let self_closing = loop {
                cursor.skip_whitespace();
                if cursor.starts_with("/>") {
                    cursor.pos += 2;
                    break true;
                }
                if cursor.starts_with(">") {
                    cursor.pos += 1;
                    break false;
                }
                let key = cursor.name()?.to_string();
                cursor.skip_whitespace();
                if !cursor.starts_with("=") {
                    return Err(bad(format!(
                        "anchor.xml: attribute {key} of <{name}> has no value"
                    )));
                }
                cursor.pos += 1;
                cursor.skip_whitespace();
                let quote = match cursor.rest().chars().next() {
                    Some(q @ ('"' | '\'')) => q,
                    _ => {
                        return Err(bad(format!(
                            "anchor.xml: attribute {key} of <{name}> is not quoted"
                        )))
                    }
                };
                cursor.pos += 1;
                let raw =
                    cursor.skip_past(if quote == '"' { "\"" } else { "'" }, "attribute value")?;
                if raw.contains('<') {
                    return Err(bad(format!(
                        "anchor.xml: '<' in attribute {key} of <{name}>"
                    )));
                }
                let mut value = String::with_capacity(raw.len());
                unescape(raw, &mut value)?;
                attributes.push((key, value));
            };
            let index = elements.len();
            elements.push(Element {
                name,
                attributes,
                ..Element::default()
            });
            match open.last() {
                Some(&parent) => elements[parent].children.push(index),
                None if index == 0 => {}
                None => return Err(bad("anchor.xml: more than one root element")),
            }
            if self_closing {
                if open.is_empty() {
                    root_done = true;
                }
            } else {
                open.push(index);
            }
        }
    }
    if let Some(&current) = open.last() {
        return Err(bad(format!(
            "anchor.xml: <{}> is not closed",
            elements[current].name
        )));
    }
    if elements.is_empty() {
        return Err(bad("anchor.xml: no root element"));
    }
    Ok(Document { elements })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_text_parses_back_to_itself() {
        let original = "a<b>&c'd\"e\tf\ng ü";
        let doc = parse(&format!(
            "<?xml version=\"1.0\"?>\n<r k=\"{}\">{}</r>",
            escape("x&\"y'"),
            escape(original)
        ))
        .unwrap();
        assert_eq!(doc.root().text, original);
        assert_eq!(doc.root().attribute("k"), Some("x&\"y'"));
    }

    #[test]
    fn nesting_comments_cdata_and_numeric_references() {
        let doc = parse("<a><!-- c --><b x='1'/><c>t&#65;&#x42;<![CDATA[<raw>]]></c></a>").unwrap();
        let root = doc.root();
        assert_eq!(root.name, "a");
        let names: Vec<&str> = doc.children(root).map(|(_, e)| e.name.as_str()).collect();
        assert_eq!(names, ["b", "c"]);
        assert_eq!(doc.first(root, "b").unwrap().attribute("x"), Some("1"));
        assert_eq!(doc.child_text(root, "c"), "tAB<raw>");
    }

    #[test]
    fn malformed_documents_are_errors() {
        for text in [
            "",
            "<a>",
            "<a></b>",
            "</a>",
            "<a/><b/>",
            "<a x=1/>",
            "<a x/>",
            "<a x=\"1/>",
            "<a>&bogus;</a>",
            "<a>&amp</a>",
            "<a>&#xD800;</a>",
            "<!DOCTYPE a [<!ENTITY e \"x\">]><a/>",
            "text<a/>",
            "<a><!-- open</a>",
            "<a><![CDATA[x</a>",
            "<>",
            "<a x=\"<\"/>",
        ] {
            assert!(parse(text).is_err(), "accepted {text:?}");
        }
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let depth = 200_000;
        let text = format!("{}{}", "<c>".repeat(depth), "</c>".repeat(depth));
        let doc = parse(&text).unwrap();
        assert_eq!(doc.elements.len(), depth);
    }

    #[test]
    fn check_text_rejects_what_xml_cannot_carry() {
        let what = || "name".to_string();
        assert!(check_text("plain ü", true, &what).is_ok());
        assert!(check_text("a\nb\tc", false, &what).is_ok());
        assert!(check_text("a\nb", true, &what).is_err());
        assert!(check_text("a\rb", false, &what).is_err());
        assert!(check_text("a\u{1}b", false, &what).is_err());
        assert!(check_text("a\u{fffe}", false, &what).is_err());
    }
}
