//! A small JSON reader for the python dump.

use super::*;

// ---------------------------------------------------------------------------------------------
// A small JSON reader for the python dump
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(BTreeMap<String, Json>),
}

impl Json {
    pub(crate) fn parse(text: &str) -> Json {
        let mut p = JsonParser {
            s: text.as_bytes(),
            i: 0,
        };
        let v = p.value();
        p.ws();
        assert_eq!(
            p.i,
            p.s.len(),
            "trailing characters after the JSON document"
        );
        v
    }
    pub(crate) fn get(&self, key: &str) -> &Json {
        match self {
            Json::Obj(m) => m
                .get(key)
                .unwrap_or_else(|| panic!("no {key:?} in {self:?}")),
            _ => panic!("not an object: {self:?}"),
        }
    }
    pub(crate) fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(a) => a,
            _ => panic!("not an array: {self:?}"),
        }
    }
}

pub(crate) struct JsonParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl JsonParser<'_> {
    pub(crate) fn ws(&mut self) {
        while matches!(self.s.get(self.i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
            self.i += 1;
        }
    }
    pub(crate) fn next(&mut self) -> u8 {
        let c = *self.s.get(self.i).expect("JSON ends early");
        self.i += 1;
        c
    }
    pub(crate) fn expect(&mut self, c: u8) {
        self.ws();
        let got = self.next();
        assert_eq!(
            got as char,
            c as char,
            "JSON: unexpected byte at {}",
            self.i - 1
        );
    }
    pub(crate) fn literal(&mut self, word: &str, value: Json) -> Json {
        assert!(
            self.s[self.i..].starts_with(word.as_bytes()),
            "JSON: bad literal"
        );
        self.i += word.len();
        value
    }
    pub(crate) fn value(&mut self) -> Json {
        self.ws();
        match self.s.get(self.i).copied().expect("JSON ends early") {
            b'{' => {
                self.i += 1;
                let mut m = BTreeMap::new();
                self.ws();
                if self.s[self.i] == b'}' {
                    self.i += 1;
                    return Json::Obj(m);
                }
                loop {
                    self.ws();
                    let key = self.string();
                    self.expect(b':');
                    let value = self.value();
                    assert!(m.insert(key, value).is_none(), "JSON: repeated key");
                    self.ws();
                    match self.next() {
                        b',' => continue,
                        b'}' => return Json::Obj(m),
                        c => panic!("JSON: unexpected {:?} in object", c as char),
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.s[self.i] == b']' {
                    self.i += 1;
                    return Json::Arr(a);
                }
                loop {
                    a.push(self.value());
                    self.ws();
                    match self.next() {
                        b',' => continue,
                        b']' => return Json::Arr(a),
                        c => panic!("JSON: unexpected {:?} in array", c as char),
                    }
                }
            }
            b'"' => Json::Str(self.string()),
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            _ => {
                let start = self.i;
                while matches!(
                    self.s.get(self.i),
                    Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                ) {
                    self.i += 1;
                }
                let t = std::str::from_utf8(&self.s[start..self.i]).unwrap();
                if t.contains(['.', 'e', 'E']) {
                    Json::Float(t.parse().unwrap_or_else(|_| panic!("JSON: bad number {t}")))
                } else {
                    Json::Int(
                        t.parse()
                            .unwrap_or_else(|_| panic!("JSON: bad number {t:?}")),
                    )
                }
            }
        }
    }
    pub(crate) fn hex4(&mut self) -> u32 {
        let t = std::str::from_utf8(&self.s[self.i..self.i + 4]).unwrap();
        self.i += 4;
        u32::from_str_radix(t, 16).expect("JSON: bad \\u escape")
    }
    pub(crate) fn string(&mut self) -> String {
        self.expect(b'"');
        let mut out = Vec::new();
        loop {
            match self.next() {
                b'"' => return String::from_utf8(out).expect("JSON: string is not UTF-8"),
                b'\\' => {
                    let c = match self.next() {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let mut cp = self.hex4();
                            if (0xd800..0xdc00).contains(&cp) {
                                assert_eq!(
                                    &self.s[self.i..self.i + 2],
                                    b"\\u",
                                    "JSON: lone surrogate"
                                );
                                self.i += 2;
                                let low = self.hex4();
                                assert!((0xdc00..0xe000).contains(&low), "JSON: bad low surrogate");
                                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                            }
                            char::from_u32(cp).expect("JSON: bad code point")
                        }
                        c => panic!("JSON: bad escape {:?}", c as char),
                    };
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                c => out.push(c),
            }
        }
    }
}

pub(crate) fn js(s: &str) -> Json {
    Json::Str(s.to_string())
}
pub(crate) fn ji(v: impl Into<i128>) -> Json {
    Json::Int(v.into())
}
/// A float as the dump writes it (non-finite values as strings).
pub(crate) fn jf(v: f64) -> Json {
    if v.is_nan() {
        js("NaN")
    } else if v.is_infinite() {
        js(if v > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        Json::Float(v)
    }
}
pub(crate) fn jobj(fields: Vec<(&str, Json)>) -> Json {
    Json::Obj(
        fields
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

#[test]
fn the_json_reader_handles_what_the_dump_can_contain() {
    let v = Json::parse(
        r#" {"a": [1, -2, 18446744073709551615, -9223372036854775808, 0.1, -2.5e+300, 1E-5],
             "b": "h\u00e9\"\\\/\n\t\ud83d\ude00 ✓", "c": {}, "d": [], "e": [true, false, null]} "#,
    );
    assert_eq!(
        v,
        jobj(vec![
            (
                "a",
                Json::Arr(vec![
                    ji(1),
                    ji(-2),
                    ji(u64::MAX),
                    ji(i64::MIN),
                    Json::Float(0.1),
                    Json::Float(-2.5e300),
                    Json::Float(1e-5),
                ])
            ),
            ("b", js("hé\"\\/\n\t😀 ✓")),
            ("c", jobj(vec![])),
            ("d", Json::Arr(vec![])),
            (
                "e",
                Json::Arr(vec![Json::Bool(true), Json::Bool(false), Json::Null])
            ),
        ])
    );
}
