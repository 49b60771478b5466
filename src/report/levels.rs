//! Factor levels as numbers, so sweeps (journal size, record size, clients) can be ordered and
//! placed on an axis: `16MB`, `1G`, `4k` are sizes (binary multiples, as mkfs and IOzone
//! read them), `4`, `0.5` plain numbers.

use crate::units::parse_size;

/// The numeric value of a level label, and whether it carried a size suffix.
pub fn parse_level(label: &str) -> Option<(f64, bool)> {
    let t = label.trim();
    if let Ok(v) = t.parse::<f64>() {
        return v.is_finite().then_some((v, false));
    }
    parse_size(t).ok().map(|b| (b as f64, true))
}

/// Numeric values of all levels, when every one parses and they are distinct; with whether
/// any is a size.
pub fn numeric_levels(levels: &[String]) -> Option<(Vec<f64>, bool)> {
    if levels.len() < 2 {
        return None;
    }
    let parsed: Option<Vec<(f64, bool)>> = levels.iter().map(|l| parse_level(l)).collect();
    let parsed = parsed?;
    let values: Vec<f64> = parsed.iter().map(|p| p.0).collect();
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    if sorted.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    Some((values, parsed.iter().any(|p| p.1)))
}

/// A compact number label: integers without decimals, others with up to 3 significant digits.
pub fn fmt_number_label(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round())
    } else {
        format!("{}", (v * 1000.0).round() / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_numbers() {
        assert_eq!(parse_level("16MB"), Some((16.0 * 1048576.0, true)));
        assert_eq!(parse_level("1G"), Some((1073741824.0, true)));
        assert_eq!(parse_level("4k"), Some((4096.0, true)));
        assert_eq!(parse_level("16"), Some((16.0, false)));
        assert_eq!(parse_level("ext4"), None);
        let levels =
            |l: &[&str]| numeric_levels(&l.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let (v, size) = levels(&["1G", "16MB", "256M", "64MB"]).unwrap();
        assert!(size);
        assert!(v[1] < v[3] && v[3] < v[2] && v[2] < v[0]);
        assert!(levels(&["1024", "1k"]).is_none());
        assert!(levels(&["ext4", "xfs"]).is_none());
    }

    #[test]
    fn labels() {
        assert_eq!(fmt_number_label(16.0), "16");
        assert_eq!(fmt_number_label(0.25), "0.25");
    }
}
