//! Builds the XSAVE shim that `fslab study run --guest uml` preloads into User-mode Linux
//! (src/runner/guest/xstate_shim.c, doc/guest.md) with the C compiler Rust itself links with,
//! and leaves it in OUT_DIR for `include_bytes!`: the shim travels inside the fslab binary,
//! so nothing is fetched or installed when a guest boots.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let src = "src/runner/guest/xstate_shim.c";
    println!("cargo:rerun-if-changed={src}");
    println!("cargo:rerun-if-env-changed=CC");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("xstate_shim.so");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if arch != "x86_64" || os != "linux" {
        // User-mode Linux on x86-64 is the only guest; elsewhere there is nothing to shim.
        std::fs::write(&out, b"").expect("writing an empty shim");
        return;
    }
    let compiler = cc::Build::new().get_compiler();
    let status = Command::new(compiler.path())
        .args([
            "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
        ])
        .arg(&out)
        .arg(src)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "building {src} needs a C compiler ({}): {e}; install one with apt-get install gcc",
                compiler.path().display()
            )
        });
    assert!(
        status.success(),
        "building {src} with {} failed ({status}); the guest's XSAVE shim is needed for --guest uml",
        compiler.path().display()
    );
}
