//! `fslab doctor` options.

use super::TextFormat;
use clap::Args;

/// `fslab doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Output: table (one line per check) or json.
    #[arg(long, value_enum, default_value_t = TextFormat::Table)]
    pub format: TextFormat,
    /// Do not boot the User-mode Linux guest (its checks are then left out). Default: the
    /// guest is booted.
    #[arg(long)]
    pub no_guest: bool,
    /// Memory of the guest the check boots.
    #[arg(long, value_name = "SIZE", default_value = "256M")]
    pub guest_mem: String,
}

pub(super) const EXAMPLES: &str = "\
Examples:
  fslab doctor                 every check, the guest booted once (about two seconds)
  fslab doctor --no-guest      the host's checks only
  fslab doctor --format json   the same as a JSON array of {check, ok, detail, fix}";
