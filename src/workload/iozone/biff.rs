//! A minimal BIFF2 (Excel 2.x) worksheet writer for IOzone's `-b file.xls`.
//!
//! IOzone writes its `-R` report as a BIFF2 worksheet (BOF, NUMBER and LABEL cells, EOF);
//! spreadsheet programs still open that format. This module writes the same record types,
//! little-endian, from the format description (record id, length, row, column, three
//! attribute bytes, then the value).

use super::report::ExcelBlock;

const BOF: u16 = 0x0009;
const NUMBER: u16 = 0x0003;
const LABEL: u16 = 0x0004;
const EOF: u16 = 0x000A;
/// BIFF version 2, worksheet.
const BOF_DATA: [u8; 4] = [0x02, 0x00, 0x10, 0x00];

/// A worksheet being built in memory.
#[derive(Debug, Clone, Default)]
pub struct Sheet {
    bytes: Vec<u8>,
}

impl Sheet {
    /// An empty worksheet (BOF written).
    pub fn new() -> Sheet {
        let mut s = Sheet { bytes: Vec::new() };
        s.record(BOF, &BOF_DATA);
        s
    }

    fn record(&mut self, id: u16, data: &[u8]) {
        self.bytes.extend_from_slice(&id.to_le_bytes());
        self.bytes
            .extend_from_slice(&(data.len() as u16).to_le_bytes());
        self.bytes.extend_from_slice(data);
    }

    fn cell_head(row: u16, col: u16) -> Vec<u8> {
        let ([r0, r1], [c0, c1]) = (row.to_le_bytes(), col.to_le_bytes());
        vec![r0, r1, c0, c1, 0, 0, 0]
    }

    /// A number cell.
    pub fn number(&mut self, row: u16, col: u16, v: f64) {
        let mut d = Self::cell_head(row, col);
        d.extend_from_slice(&v.to_le_bytes());
        self.record(NUMBER, &d);
    }

    /// A text cell (at most 255 bytes are kept, as BIFF2 allows).
    pub fn label(&mut self, row: u16, col: u16, text: &str) {
        let b = text.as_bytes();
        let b = &b[..b.len().min(255)];
        let mut d = Self::cell_head(row, col);
        d.push(b.len() as u8);
        d.extend_from_slice(b);
        self.record(LABEL, &d);
    }

    /// The finished file (EOF appended).
    pub fn finish(mut self) -> Vec<u8> {
        self.record(EOF, &[]);
        self.bytes
    }
}

/// IOzone's `-b` layout: the command line, a blank line, the legend, then per test a title
/// row, a row of record sizes (from column 1) and one row per file size (file size in
/// column 0, values from column 1).
pub fn workbook(command_line: &str, blocks: &[ExcelBlock]) -> Vec<u8> {
    let mut s = Sheet::new();
    let mut row: u16 = 0;
    let legend = "The top row is records sizes, the left column is file sizes";
    for text in [command_line, " ", legend] {
        s.label(row, 0, text);
        row += 1;
    }
    for b in blocks {
        s.label(row, 0, b.title);
        row = row.saturating_add(1);
        for (i, r) in b.records_kib.iter().enumerate() {
            s.number(row, (i + 1) as u16, *r as f64);
        }
        row = row.saturating_add(1);
        for (f, vals) in &b.rows {
            s.number(row, 0, *f as f64);
            for (i, v) in vals.iter().enumerate() {
                s.number(row, (i + 1) as u16, *v as f64);
            }
            row = row.saturating_add(1);
        }
    }
    s.finish()
}

/// Parse a BIFF2 file back into (row, column, value) cells (tests and `fslab` self-checks).
pub fn parse(bytes: &[u8]) -> Option<Vec<(u16, u16, String)>> {
    let mut cells = Vec::new();
    let mut i = 0;
    let mut seen_bof = false;
    while i + 4 <= bytes.len() {
        let id = u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        let len = u16::from_le_bytes([bytes[i + 2], bytes[i + 3]]) as usize;
        let d = bytes.get(i + 4..i + 4 + len)?;
        i += 4 + len;
        match id {
            BOF => seen_bof = d == BOF_DATA,
            EOF => return seen_bof.then_some(cells),
            NUMBER | LABEL => {
                let row = u16::from_le_bytes([d[0], d[1]]);
                let col = u16::from_le_bytes([d[2], d[3]]);
                let v = if id == NUMBER {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(d.get(7..15)?);
                    format!("{}", f64::from_le_bytes(a))
                } else {
                    let n = *d.get(7)? as usize;
                    String::from_utf8_lossy(d.get(8..8 + n)?).into_owned()
                };
                cells.push((row, col, v));
            }
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::iozone::report;

    #[test]
    fn biff_worksheet_round_trips() {
        let blocks = vec![report::ExcelBlock {
            title: "Writer report",
            records_kib: vec![4, 8],
            rows: vec![(64, vec![1000, 2000])],
        }];
        let bytes = workbook("iozone -a", &blocks);
        assert_eq!(&bytes[..8], &[0x09, 0, 4, 0, 2, 0, 0x10, 0]);
        assert_eq!(&bytes[bytes.len() - 4..], &[0x0A, 0, 0, 0]);
        let cells = parse(&bytes).unwrap();
        assert!(cells.contains(&(0, 0, "iozone -a".into())));
        assert!(cells.contains(&(3, 0, "Writer report".into())));
        assert!(cells.contains(&(4, 2, "8".into())));
        assert!(cells.contains(&(5, 0, "64".into())));
        assert!(cells.contains(&(5, 2, "2000".into())));
    }
}
