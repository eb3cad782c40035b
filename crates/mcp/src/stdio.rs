//! `lattice mcp --stdio`: the exporter over stdin and stdout, for one
//! caller, whose token was verified when the process started.

use lattice_log::Authenticated;
use rmcp::ServiceExt;

use crate::Exporter;

/// Serves `exporter` as `who` until the client closes the stream.
pub async fn serve(exporter: Exporter, who: Authenticated) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let running = exporter.acting_as(who).serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
