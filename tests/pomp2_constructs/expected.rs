//! Expected record sequences: a location's record texts matched against a pattern with
//! captures and repeated blocks.

use super::*;

/// One expected record text.
#[derive(Clone, Debug)]
pub(crate) enum Tok {
    /// Exactly this text.
    Is(String),
    /// A text starting with the prefix; the rest is captured under the tag.
    Cap(String, String),
}

#[derive(Clone, Debug)]
pub(crate) enum Pat {
    One(Tok),
    /// The block as often as it occurs here (none included); counted under the tag.
    Rep(String, Vec<Tok>),
}

/// The expected records of one location.
#[derive(Clone, Debug, Default)]
pub(crate) struct Seq(Vec<Pat>);

impl Seq {
    pub(crate) fn new() -> Seq {
        Seq::default()
    }
    pub(crate) fn is(mut self, text: impl Into<String>) -> Seq {
        self.0.push(Pat::One(Tok::Is(text.into())));
        self
    }
    pub(crate) fn cap(mut self, tag: &str, prefix: &str) -> Seq {
        self.0.push(Pat::One(Tok::Cap(tag.into(), prefix.into())));
        self
    }
    pub(crate) fn rep(mut self, tag: &str, block: Vec<Tok>) -> Seq {
        self.0.push(Pat::Rep(tag.into(), block));
        self
    }
    pub(crate) fn then(mut self, other: Seq) -> Seq {
        self.0.extend(other.0);
        self
    }
    pub(crate) fn when(self, cond: bool, f: impl FnOnce(Seq) -> Seq) -> Seq {
        if cond {
            f(self)
        } else {
            self
        }
    }
    /// Enter `name`, what `body` adds, Leave `name`.
    pub(crate) fn region(self, name: impl Into<String>, body: impl FnOnce(Seq) -> Seq) -> Seq {
        let name = name.into();
        body(self.is(format!("Enter {name}"))).is(format!("Leave {name}"))
    }
}

impl Tok {
    /// The capture, if `text` matches.
    pub(crate) fn matches(&self, text: &str) -> Option<Option<(String, String)>> {
        match self {
            Tok::Is(want) => (want == text).then_some(None),
            Tok::Cap(tag, prefix) => text
                .strip_prefix(prefix.as_str())
                .map(|rest| Some((tag.clone(), rest.to_string()))),
        }
    }
    pub(crate) fn show(&self) -> String {
        match self {
            Tok::Is(t) => t.clone(),
            Tok::Cap(tag, prefix) => format!("{prefix}<{tag}>"),
        }
    }
}

/// What a location's records matched: captures in record order, and block repetitions.
#[derive(Debug, Default)]
pub(crate) struct Matched {
    pub(crate) caps: Vec<(String, String)>,
    pub(crate) reps: BTreeMap<String, usize>,
}

impl Matched {
    pub(crate) fn values(&self, tag: &str) -> Vec<&str> {
        self.caps
            .iter()
            .filter(|(t, _)| t == tag)
            .map(|(_, v)| v.as_str())
            .collect()
    }
    pub(crate) fn reps(&self, tag: &str) -> usize {
        self.reps.get(tag).copied().unwrap_or(0)
    }
}

/// Matches a location's record texts against the expected sequence (blocks greedily).
pub(crate) fn match_seq(location: &str, actual: &[String], seq: &Seq) -> Matched {
    let fail = |at: usize, what: String| -> ! {
        let expected: Vec<String> = seq
            .0
            .iter()
            .map(|p| match p {
                Pat::One(t) => t.show(),
                Pat::Rep(tag, block) => format!(
                    "( {} )* <{tag}>",
                    block.iter().map(Tok::show).collect::<Vec<_>>().join(" ; ")
                ),
            })
            .collect();
        let numbered: Vec<String> = actual
            .iter()
            .enumerate()
            .map(|(i, t)| format!("{i:4}{} {t}", if i == at { " >>" } else { "   " }))
            .collect();
        panic!(
            "{location}: {what} at record {at}\nexpected:\n  {}\nactual:\n{}",
            expected.join("\n  "),
            numbered.join("\n")
        )
    };
    let mut m = Matched::default();
    let mut i = 0;
    for p in &seq.0 {
        match p {
            Pat::One(tok) => match actual.get(i).and_then(|t| tok.matches(t)) {
                Some(cap) => {
                    m.caps.extend(cap);
                    i += 1;
                }
                None => fail(i, format!("expected `{}`", tok.show())),
            },
            Pat::Rep(tag, block) => loop {
                let caps: Option<Vec<_>> = block
                    .iter()
                    .enumerate()
                    .map(|(j, tok)| actual.get(i + j).and_then(|t| tok.matches(t)))
                    .collect();
                match caps {
                    Some(caps) => {
                        m.caps.extend(caps.into_iter().flatten());
                        *m.reps.entry(tag.clone()).or_insert(0) += 1;
                        i += block.len();
                    }
                    None => break,
                }
            },
        }
    }
    if i != actual.len() {
        fail(i, "unexpected record".into());
    }
    m
}
