//! libCacheSim's csv traces: one request per line, columns chosen by number (1-based) as
//! libCacheSim's `-t "time-col=1, obj-id-col=2, obj-size-col=3, has-header=true"` does.
//! Stricter than libCacheSim: a non-numeric id (with `obj-id-is-num=true`), size or time,
//! or a row whose column count differs from the first row's, is an error naming the line
//! and the column.

use super::{
    fnv1a, parse_seconds_ns, parse_u64, FormatDef, Lines, RecordSource, Request, TraceKind,
};
use std::io::BufRead;

/// `csv[:options]`: the options (`CsvOptions::parse`), any `.csv` name not taken before.
pub const FORMAT: FormatDef = FormatDef {
    names: &["csv"],
    usage: "csv[:options]",
    kind: TraceKind::Object,
    guess: |name, _| name.ends_with(".csv"),
    options: |o| CsvOptions::parse(o).map(|o| o.spell()),
    reader: |input, o| {
        let o = CsvOptions::parse(o).expect("spelled by CsvOptions::spell");
        Box::new(CsvReader::new(input, o))
    },
};

/// Options of the csv reader (libCacheSim's `-t` options).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvOptions {
    /// 1-based column of the timestamp (seconds), 0 = none.
    pub time_col: usize,
    /// 1-based column of the object id.
    pub obj_id_col: usize,
    /// 1-based column of the object size (bytes), 0 = none.
    pub obj_size_col: usize,
    /// 1-based column of the key's size (bytes), added to the object size; 0 = none. Not
    /// libCacheSim's: Twitter's cache traces (`timestamp,key,key size,value size,client
    /// id,operation,TTL`) give the two apart, and the item a cache holds is both (as the
    /// object size of libCacheSim's conversions of them is).
    pub key_size_col: usize,
    /// 1-based column of the operation (`read`/`get`/`r` or `write`/`set`/`w`), 0 = none.
    pub op_col: usize,
    /// Field delimiter.
    pub delimiter: u8,
    /// The first line is a header.
    pub has_header: bool,
    /// Object ids are numbers (else any string, hashed to 64 bits with FNV-1a).
    pub obj_id_is_num: bool,
}

impl Default for CsvOptions {
    fn default() -> Self {
        CsvOptions {
            time_col: 0,
            obj_id_col: 1,
            obj_size_col: 0,
            key_size_col: 0,
            op_col: 0,
            delimiter: b',',
            has_header: false,
            obj_id_is_num: true,
        }
    }
}

impl CsvOptions {
    /// Parse the options after `csv:` (the module documentation lists them).
    pub fn parse(s: &str) -> Result<CsvOptions, String> {
        let mut o = CsvOptions::default();
        // `delimiter=,` would split at its own comma: spell it out first.
        let s = s.replace("delimiter=,", "delimiter=comma");
        for kv in s.split(',').map(str::trim).filter(|k| !k.is_empty()) {
            let Some((k, v)) = kv.split_once('=') else {
                return Err(format!("option \"{kv}\": expected key=value"));
            };
            let (k, v) = (k.trim(), v.trim());
            let col = |v: &str| -> Result<usize, String> {
                v.parse::<usize>()
                    .map_err(|_| format!("option {k}: \"{v}\" is not a column number (1-based)"))
            };
            let boolean = |v: &str| -> Result<bool, String> {
                match v {
                    "true" | "1" | "yes" => Ok(true),
                    "false" | "0" | "no" => Ok(false),
                    _ => Err(format!("option {k}: \"{v}\" is not true or false")),
                }
            };
            match k {
                "time-col" => o.time_col = col(v)?,
                "obj-id-col" => o.obj_id_col = col(v)?,
                "obj-size-col" => o.obj_size_col = col(v)?,
                "key-size-col" => o.key_size_col = col(v)?,
                "op-col" => o.op_col = col(v)?,
                "has-header" => o.has_header = boolean(v)?,
                "obj-id-is-num" => o.obj_id_is_num = boolean(v)?,
                "delimiter" => {
                    o.delimiter = match v {
                        "comma" => b',',
                        "tab" | "\\t" => b'\t',
                        "space" => b' ',
                        _ if v.len() == 1 => v.as_bytes()[0],
                        _ => {
                            return Err(format!(
                            "option delimiter: \"{v}\" is not one character (or comma, tab, space)"
                        ))
                        }
                    }
                }
                _ => {
                    return Err(format!(
                        "unknown option \"{k}\"; options: time-col, obj-id-col, obj-size-col, \
                         key-size-col, op-col, delimiter, has-header, obj-id-is-num"
                    ))
                }
            }
        }
        if o.obj_id_col == 0 {
            return Err("option obj-id-col: must be at least 1 (columns are 1-based)".into());
        }
        let k = o.key_size_col;
        if k != 0 && [o.time_col, o.obj_id_col, o.obj_size_col, o.op_col].contains(&k) {
            return Err(format!(
                "option key-size-col: column {k} is already another option's"
            ));
        }
        Ok(o)
    }

    /// The canonical spelling of the options (what [`CsvOptions::parse`] reads back).
    pub fn spell(&self) -> String {
        let delim = match self.delimiter {
            b',' => "comma".to_string(),
            b'\t' => "tab".to_string(),
            b' ' => "space".to_string(),
            c => (c as char).to_string(),
        };
        // key-size-col only when set: the spelling of every other csv format as before.
        let key = if self.key_size_col == 0 {
            String::new()
        } else {
            format!("key-size-col={},", self.key_size_col)
        };
        format!(
            "time-col={},obj-id-col={},obj-size-col={},{key}op-col={},delimiter={},\
             has-header={},obj-id-is-num={}",
            self.time_col,
            self.obj_id_col,
            self.obj_size_col,
            self.op_col,
            delim,
            self.has_header,
            self.obj_id_is_num
        )
    }
}

/// Reads a csv trace.
pub struct CsvReader {
    lines: Lines,
    opts: CsvOptions,
    columns: Option<usize>,
    need: usize,
    started: bool,
}

type Err = super::RecErr;

impl CsvReader {
    /// A reader of `input` with `opts`.
    pub fn new(input: Box<dyn BufRead>, opts: CsvOptions) -> CsvReader {
        let need = opts
            .time_col
            .max(opts.obj_id_col)
            .max(opts.obj_size_col)
            .max(opts.key_size_col)
            .max(opts.op_col);
        CsvReader {
            lines: Lines::new(input),
            opts,
            columns: None,
            need,
            started: false,
        }
    }
}

/// The fields of one record (RFC 4180): a field may be enclosed in double quotes, and
/// then holds the delimiter and line text as they are, `""` standing for one quote;
/// whitespace around a field is dropped. A line without a quote is split as it is
/// (no copy); a field with an escaped quote is the only one copied.
struct Fields<'a> {
    rest: Option<&'a str>,
    delim: char,
}

fn fields(line: &str, delim: char) -> Fields<'_> {
    Fields {
        rest: Some(line),
        delim,
    }
}

impl<'a> Iterator for Fields<'a> {
    /// A field, or the error of a quoted field with no closing quote.
    type Item = Result<std::borrow::Cow<'a, str>, &'static str>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest?;
        // Whitespace around a field, but not a whitespace delimiter (tab, space).
        let delim = self.delim;
        let blank = move |c: char| c.is_whitespace() && c != delim;
        let t = rest.trim_start_matches(blank);
        let Some(quoted) = t.strip_prefix('"') else {
            let (field, after) = match rest.split_once(self.delim) {
                Some((f, a)) => (f, Some(a)),
                None => (rest, None),
            };
            self.rest = after;
            return Some(Ok(field.trim().into()));
        };
        // A quoted field: up to the quote that is not doubled.
        let bytes = quoted.as_bytes();
        let mut i = 0;
        let mut escaped = false;
        let end = loop {
            match bytes[i..].iter().position(|&b| b == b'"') {
                None => {
                    self.rest = None;
                    return Some(Err("a quoted field has no closing quote"));
                }
                Some(j) if bytes.get(i + j + 1) == Some(&b'"') => {
                    escaped = true;
                    i += j + 2;
                }
                Some(j) => break i + j,
            }
        };
        let inner = &quoted[..end];
        let after = quoted[end + 1..].trim_start_matches(blank);
        self.rest = match after.strip_prefix(self.delim) {
            Some(a) => Some(a),
            None if after.is_empty() => None,
            None => {
                self.rest = None;
                return Some(Err("text after a quoted field's closing quote"));
            }
        };
        Some(Ok(if escaped {
            inner.replace("\"\"", "\"").into()
        } else {
            inner.into()
        }))
    }
}

impl RecordSource for CsvReader {
    fn next_record(&mut self) -> Result<Option<Request>, Err> {
        let delim = self.opts.delimiter as char;
        if !self.started {
            self.started = true;
            if self.opts.has_header {
                let need = self.need;
                let Some(h) = self.lines.next_line()? else {
                    return Ok(None);
                };
                let n = fields(h, delim).count();
                if n < need {
                    return Err((
                        Some(1),
                        Some("header".into()),
                        format!(
                            "bad header: {n} column(s) separated by {:?}, but column {need} is \
                             used (check delimiter and the *-col options)",
                            delim
                        ),
                    ));
                }
                self.columns = Some(n);
            }
        }
        loop {
            let line_no = self.lines.line + 1;
            let Some(line) = self.lines.next_line()? else {
                return Ok(None);
            };
            if line.trim().is_empty() {
                continue;
            }
            let mut req = Request {
                time_ns: 0,
                id: 0,
                offset: 0,
                len: 0,
                write: false,
                delete: false,
            };
            let mut n = 0usize;
            for (i, field) in fields(line, delim).enumerate() {
                let col = i + 1;
                n = col;
                let field = field
                    .map_err(|m| (Some(line_no), Some(format!("column {col}")), m.to_string()))?;
                let v: &str = &field;
                if col == self.opts.obj_id_col {
                    req.id = if self.opts.obj_id_is_num {
                        parse_u64(v, line_no, &format!("obj-id (column {col})")).map_err(
                            |(r, f, m)| {
                                let hint = if line_no == 1 && !self.opts.has_header {
                                    " (is the first line a header? use has-header=true)"
                                } else {
                                    " (use obj-id-is-num=false for string ids)"
                                };
                                (r, f, format!("{m}{hint}"))
                            },
                        )?
                    } else {
                        fnv1a(v.as_bytes())
                    };
                } else if col == self.opts.time_col {
                    req.time_ns = parse_seconds_ns(v, line_no, &format!("time (column {col})"))?;
                } else if col == self.opts.obj_size_col {
                    let size = parse_u64(v, line_no, &format!("obj-size (column {col})"))?;
                    req.len = req.len.saturating_add(size);
                } else if col == self.opts.key_size_col {
                    let size = parse_u64(v, line_no, &format!("key-size (column {col})"))?;
                    req.len = req.len.saturating_add(size);
                } else if col == self.opts.op_col {
                    (req.write, req.delete) = match v.to_ascii_lowercase().as_str() {
                        "r" | "read" | "get" | "gets" => (false, false),
                        "w" | "write" | "set" | "put" | "add" | "replace" | "update" | "cas"
                        | "append" | "prepend" | "incr" | "decr" => (true, false),
                        "delete" | "del" => (false, true),
                        _ => {
                            return Err((
                                Some(line_no),
                                Some(format!("op (column {col})")),
                                format!(
                                    "unknown operation \"{v}\" (read: get, gets, read, r; \
                                     write: set, add, replace, cas, append, prepend, incr, \
                                     decr, update, put, write, w; delete, del)"
                                ),
                            ))
                        }
                    };
                }
            }
            if n < self.need {
                return Err((
                    Some(line_no),
                    None,
                    format!(
                        "wrong column count: {n} column(s) separated by {:?}, but column {} is used",
                        delim, self.need
                    ),
                ));
            }
            match self.columns {
                None => self.columns = Some(n),
                Some(c) if c != n => {
                    return Err((
                        Some(line_no),
                        None,
                        format!("wrong column count: {n} column(s), the first row has {c}"),
                    ))
                }
                _ => {}
            }
            return Ok(Some(req));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    fn fmt(s: &str) -> Format {
        Format::parse(s).unwrap()
    }

    #[test]
    fn twitter_lines_with_the_key_size_added_to_the_value_size() {
        // Twitter's cache trace layout: timestamp, key, key size, value size, client,
        // operation, TTL.
        let t = b"0,ZbjzDLK-aA,14,279,1,get,0\n1,Zbj_QE7-pA,43,36,1,set,3600\n\
                  2,Zbj_QE7-pA,43,0,1,delete,0\n";
        let spec = "csv:time-col=1,obj-id-col=2,key-size-col=3,obj-size-col=4,op-col=6,\
                    obj-id-is-num=false";
        let f = fmt(spec);
        let r = read_all(t, "cluster52.csv", &f).unwrap();
        let got: Vec<_> = r.iter().map(|r| (r.len, r.write, r.delete)).collect();
        assert_eq!(
            got,
            [(293, false, false), (79, true, false), (43, false, true)]
        );
        assert_eq!(r[1].id, r[2].id);
        // Spelled back to the same options; without it, spelled as before.
        assert_eq!(Format::parse(&f.spec()).unwrap(), f);
        assert!(f.spec().contains("key-size-col=3"));
        assert!(!fmt("csv:obj-size-col=4").spec().contains("key-size"));
        // A column taken twice, a key size that is not a number: errors naming them.
        let e = Format::parse("csv:obj-size-col=3,key-size-col=3").unwrap_err();
        assert!(e.contains("key-size-col") && e.contains("column 3"), "{e}");
        let e = read_all(b"0,k,x,5,1,get,0\n", "t.csv", &f).unwrap_err();
        assert_eq!(e.record, Some(1));
        assert!(e.to_string().contains("key-size (column 3)"), "{e}");
    }

    #[test]
    fn reads_columns_and_header() {
        let t = b"time,id,size,op\n1,10,4096,get\n2,11,8192,set\n";
        let f = fmt("csv:time-col=1,obj-id-col=2,obj-size-col=3,op-col=4,has-header=true");
        let r = read_all(t, "t.csv", &f).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].time_ns, r[0].id, r[0].len, r[0].write),
            (1_000_000_000, 10, 4096, false)
        );
        assert_eq!((r[1].id, r[1].len, r[1].write), (11, 8192, true));
        // zstd
        let r2 = read_all(&zst(t), "t.csv.zst", &f).unwrap();
        assert_eq!(r, r2);
    }

    #[test]
    fn memcached_operations_read_write_or_delete() {
        // Twitter's cache traces name memcached's commands (key, op columns).
        let f = fmt("csv:obj-id-col=1,op-col=2");
        let ops = [
            "get", "gets", "set", "add", "replace", "cas", "append", "prepend",
        ];
        let more = ["incr", "decr", "delete", "DEL"];
        let text: String = ops
            .iter()
            .chain(&more)
            .map(|o| format!("7,{o}\n"))
            .collect();
        let r = read_all(text.as_bytes(), "k.csv", &f).unwrap();
        let got: Vec<(bool, bool)> = r.iter().map(|q| (q.write, q.delete)).collect();
        let (rd, wr, del) = ((false, false), (true, false), (false, true));
        assert_eq!(got, [rd, rd, wr, wr, wr, wr, wr, wr, wr, wr, del, del]);
        let e = read_all(b"7,get\n7,flush_all\n", "k.csv", &f).unwrap_err();
        assert_eq!(
            (e.record, e.field.as_deref()),
            (Some(2), Some("op (column 2)"))
        );
    }

    #[test]
    fn quoted_fields_hold_the_delimiter_and_doubled_quotes() {
        let f = fmt("csv:obj-id-col=2,obj-size-col=3,obj-id-is-num=false,has-header=true");
        let t = b"t,\"key, with comma\",size\n\
                  1,\"a,b\",4096\n\
                  2, \"a,b\" ,8192\n\
                  3,\"say \"\"hi\"\"\",1\n\
                  4,say \"hi\",1\n";
        let r = read_all(t, "q.csv", &f).unwrap();
        assert_eq!(r.len(), 4);
        // The comma inside the quotes is part of the id, and whitespace around the
        // quotes is dropped: the same object.
        assert_eq!(r[0].id, r[1].id);
        assert_eq!((r[0].len, r[1].len), (4096, 8192));
        assert_eq!(r[0].id, crate::trace::fnv1a(b"a,b"));
        // `""` inside quotes is one quote: the same id as the unquoted spelling.
        assert_eq!(r[2].id, crate::trace::fnv1a(b"say \"hi\""));
        assert_eq!(r[2].id, r[3].id);
        // A quote that never closes, or text after the closing quote: errors naming the
        // record and the column.
        let e = read_all(b"t,k,s\n1,\"open,5\n", "q.csv", &f).unwrap_err();
        assert_eq!(
            (e.record, e.field.as_deref()),
            (Some(2), Some("column 2")),
            "{e}"
        );
        assert!(e.msg.contains("no closing quote"), "{e}");
        let e = read_all(b"t,k,s\n1,\"k\"x,5\n", "q.csv", &f).unwrap_err();
        assert!(e.msg.contains("after a quoted field"), "{e}");
        // A whitespace delimiter is not whitespace around a field.
        let f = fmt("csv:obj-id-col=1,obj-size-col=2,obj-id-is-num=false,delimiter=tab");
        let r = read_all(b"\"a b\"\t4096\n", "q.csv", &f).unwrap();
        assert_eq!((r[0].id, r[0].len), (crate::trace::fnv1a(b"a b"), 4096));
    }

    #[test]
    fn string_ids_hash() {
        let f = fmt("csv:obj-id-col=1,obj-id-is-num=false");
        let r = read_all(b"abc\nabc\nxyz\n", "t.csv", &f).unwrap();
        assert_eq!(r[0].id, r[1].id);
        assert_ne!(r[0].id, r[2].id);
    }

    #[test]
    fn bad_header_names_file_and_record() {
        let f = fmt("csv:obj-id-col=3,has-header=true");
        let e = read_all(b"a;b;c\n1;2;3\n", "h.csv", &f).unwrap_err();
        assert_eq!((e.file.as_str(), e.record), ("h.csv", Some(1)));
        assert!(e.msg.contains("bad header"), "{e}");
    }

    #[test]
    fn header_without_has_header_hints() {
        let e = read_all(b"id\n1\n", "h.csv", &fmt("csv")).unwrap_err();
        assert_eq!(e.record, Some(1));
        assert!(e.to_string().contains("has-header=true"), "{e}");
    }

    #[test]
    fn wrong_column_count() {
        let f = fmt("csv:obj-id-col=2,obj-size-col=3");
        let e = read_all(b"1,2,3\n4,5\n", "c.csv", &f).unwrap_err();
        assert_eq!(e.record, Some(2));
        assert!(e.msg.contains("wrong column count"), "{e}");
        let e = read_all(b"1,2,3\n4,5,6,7\n", "c.csv", &f).unwrap_err();
        assert_eq!(e.record, Some(2));
        assert!(e.msg.contains("first row has 3"), "{e}");
    }

    #[test]
    fn bad_fields_name_the_column() {
        let f = fmt("csv:obj-id-col=1,obj-size-col=2");
        let e = read_all(b"1,10\n2,x\n", "c.csv", &f).unwrap_err();
        assert_eq!(e.record, Some(2));
        assert_eq!(e.field.as_deref(), Some("obj-size (column 2)"));
        let e = read_all(b"1,10\n2,-5\n", "c.csv", &f).unwrap_err();
        assert_eq!(e.record, Some(2));
    }

    #[test]
    fn truncated_last_line_is_read() {
        let r = read_all(b"1\n2", "c.csv", &fmt("csv")).unwrap();
        assert_eq!(r.len(), 2);
    }
}
