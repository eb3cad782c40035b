//! The log's seal from a terminal (docs/SEAL.md): `lattice export` writes a
//! workspace's sealed log as JSON Lines, `lattice verify` checks one
//! offline with nothing but the public keys it trusts, and `lattice
//! seal-key` prints this deployment's public key.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use lattice_seal::{Export, SealKey};

use crate::config::Config;
use crate::schema::Behind;

/// The deployment's seal key: derived from its secret, as every replica's.
pub fn key(config: &Config) -> anyhow::Result<SealKey> {
    Ok(SealKey::derive(&config.secret()?))
}

/// `lattice seal-key`: the public key and its id, what a verifier is given.
pub fn print_key(config: &Config) -> anyhow::Result<()> {
    let key = key(config)?;
    println!("{}  (key id {})", key.public_hex(), key.id());
    Ok(())
}

/// `lattice export [--tenant T] [--workspace W] [--out FILE]`: the
/// workspace's tenant is its own, found when not named.
pub async fn export(config: &Config, tenant: Option<&str>, workspace: Option<&str>, out: Option<&Path>) -> anyhow::Result<()> {
    let db = crate::schema::open(config, 2, Behind::Refuse).await?;
    let found = match (tenant, workspace) {
        (Some(tenant), _) => tenant.to_owned(),
        (None, Some(ws)) => lattice_log::seal::tenant_of(&db, ws).await.map_err(|_| anyhow::anyhow!("--workspace {ws}: no such workspace"))?,
        (None, None) => anyhow::bail!("name the --workspace (or the --tenant for its envelopes of no workspace)"),
    };
    let tenant = found.as_str();
    let workspace = workspace.unwrap_or_default();
    let count = match out {
        Some(path) => {
            let file = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
            let mut writer = std::io::BufWriter::new(file);
            let count = lattice_log::seal::export(&db, tenant, workspace, &mut writer).await?;
            writer.flush()?;
            count
        }
        None => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            let count = lattice_log::seal::export(&db, tenant, workspace, &mut stdout).await?;
            stdout.flush()?;
            count
        }
    };
    eprintln!("exported {count} envelopes of {tenant}/{}", if workspace.is_empty() { "_" } else { workspace });
    Ok(())
}

/// `lattice verify FILE --key HEX… [--receipt RECEIPT]`: prints the
/// report (and what the receipt proves); `false` when the export is not
/// intact or the receipt does not hold (the command then exits 1).
pub fn verify(file: &Path, keys: &[String], receipt: Option<&Path>) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let export = Export::read(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let keys =
        keys.iter().map(|k| lattice_seal::verifying_key(k).map_err(|e| anyhow::anyhow!("--key {k}: {e}"))).collect::<anyhow::Result<Vec<_>>>()?;
    let report = lattice_seal::verify(&export, &keys);
    println!("{report}");
    let Some(path) = receipt else { return Ok(report.intact()) };
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let receipt: lattice_seal::Receipt = serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: not a receipt: {e}", path.display()))?;
    match lattice_seal::verify_receipt(&receipt, &export, &keys) {
        Ok(said) => {
            println!("{said}");
            Ok(report.intact())
        }
        Err(why) => {
            println!("the receipt does not hold: {why}");
            Ok(false)
        }
    }
}
