//! `lattice`: one binary for every service.

mod config;
mod demo;
mod doctor;
mod healthcheck;
mod observe;
mod probes;
mod schema;
mod seal;
mod serve;
mod sign_out;
mod signals;
mod switch;
mod telemetry;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use lattice_core::{Principal, TenantId, TenantRole, UserId};

use crate::config::Config;

#[derive(Parser)]
#[command(
    name = "lattice",
    version,
    about = "Forms, dashboards and sandboxed mini apps in the chat, every action one command in an append-only log."
)]
struct Cli {
    /// A TOML configuration file (default: ./lattice.toml when present).
    #[arg(long, global = true, env = "LATTICE_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs everything in one process: the embedded default.
    Up,
    /// Runs one service.
    Serve {
        #[arg(value_enum)]
        service: Service,
    },
    /// Applies the database migrations and exits.
    Migrate,
    /// Mints a token with the configured secret and prints it.
    Token {
        /// The tenant the token acts in.
        #[arg(long)]
        tenant: String,
        /// The user it names (a person's or an agent's name in the tenant).
        #[arg(long)]
        user: String,
        /// Its tenant-wide role.
        #[arg(long, value_enum, default_value_t = RoleArg::Member)]
        role: RoleArg,
        /// An agent's token.
        #[arg(long)]
        agent: bool,
    },
    /// Prints the configuration in force (secrets masked).
    Config,
    /// Checks this deployment's configuration before it runs: the database
    /// reachable and migrated, NATS, the secrets for the profile, the apps
    /// origin another site, the chat host built. Each finding says its fix;
    /// exits 1 when one needs fixing. Changes nothing.
    Doctor,
    /// The kill switch from a terminal: sets a level's state for a kind of
    /// UI, or lists the states and effective values, in the configured
    /// database (as the system actor `cli:<your user>`, audited).
    Switch {
        #[command(subcommand)]
        action: SwitchAction,
    },
    /// Signs a person out everywhere: every token issued to them until now
    /// is refused and their open streams and MCP sessions end (as the
    /// system actor `cli:<your user>`, in the log).
    SignOut {
        /// The person's tenant.
        #[arg(long)]
        tenant: String,
        /// The person.
        #[arg(long)]
        user: String,
    },
    /// Writes a workspace's log with its seals and signed checkpoints, as
    /// JSON Lines, for `lattice verify` (docs/SEAL.md).
    #[command(group(clap::ArgGroup::new("which").args(["tenant", "workspace"]).required(true).multiple(true)))]
    Export {
        /// The tenant: found from the workspace when left out; alone, its
        /// envelopes of no workspace.
        #[arg(long)]
        tenant: Option<String>,
        /// The workspace.
        #[arg(long)]
        workspace: Option<String>,
        /// The file to write (else standard output).
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Checks an export offline with nothing but the public keys trusted
    /// (`lattice seal-key` prints this deployment's): "intact", or the first
    /// envelope altered, removed, inserted or reordered. Exits 1 when not
    /// intact.
    Verify {
        /// The export (`lattice export`).
        file: std::path::PathBuf,
        /// A trusted public key (64 hex digits); one per key the log was
        /// sealed with.
        #[arg(long = "key", required = true)]
        keys: Vec<String>,
        /// A receipt (`GET /v1/receipts/{seq}`) to check against the export.
        #[arg(long)]
        receipt: Option<std::path::PathBuf>,
    },
    /// Prints this deployment's seal public key and its id.
    SealKey,
    /// Exits 0 when this machine's service (at LATTICE_HTTP_ADDR) is ready:
    /// a container health check that needs no HTTP client in the image.
    Healthcheck {
        /// The path to ask (`/healthz` for alive only).
        #[arg(long, default_value = "/readyz")]
        path: String,
    },
    /// The MCP exporter over standard input and output, as the caller whose
    /// token is LATTICE_TOKEN.
    Mcp {
        /// Speak MCP over stdin/stdout (the only transport of this command).
        #[arg(long)]
        stdio: bool,
        /// The caller's bearer token (`lattice token` mints one); the tools
        /// act with its rights.
        #[arg(long, env = "LATTICE_TOKEN", hide_env_values = true)]
        token: String,
    },
}

#[derive(Subcommand)]
enum SwitchAction {
    /// Sets one level's state for one key; every open chat follows within
    /// a second. Example: `lattice switch set deployment ui:mini-apps off --reason "incident 42"`.
    Set {
        /// `deployment`, `tenant:<id>` or `workspace:<id>`.
        level: String,
        /// `ui:forms`, `ui:dashboards` or `ui:mini-apps`.
        key: String,
        /// `on`, `off`, or `unset` (the level above decides).
        #[arg(value_parser = ["on", "off", "unset"])]
        state: String,
        /// Why: kept in the audit with the change (required).
        #[arg(long)]
        reason: String,
    },
    /// Lists each key's state and effective value: at LEVEL, or at the
    /// deployment and every level that holds a state.
    List {
        /// `deployment`, `tenant:<id>` or `workspace:<id>`.
        level: Option<String>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Service {
    /// The log service: the write path and `/v1`.
    Log,
    /// The projection bridge: the log into NATS JetStream.
    Bridge,
    /// The edge: the portal (the chat host, `/v1` passed to the log service
    /// at LATTICE_LOG_URL) and the apps origin (the sandbox proxy).
    Edge,
    /// The MCP exporter over streamable HTTP at `/mcp`.
    Mcp,
}

impl Service {
    fn name(self) -> &'static str {
        match self {
            Self::Log => "log",
            Self::Bridge => "bridge",
            Self::Edge => "edge",
            Self::Mcp => "mcp",
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum RoleArg {
    /// Sees and acts in the workspaces it is a member of.
    Member,
    /// Administers every workspace of its tenant, and the tenant's switch.
    TenantAdmin,
    /// Administers the deployment's switch.
    DeploymentAdmin,
}

fn main() -> anyhow::Result<()> {
    // One TLS stack for every client (the database, NATS, the model, OTLP):
    // rustls with ring, the system's roots and SSL_CERT_FILE.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cli = Cli::parse();
    if let Command::Doctor = cli.command {
        // Every setting is a finding of its own, so none is checked first.
        let config = Config::read(cli.config.as_deref())?;
        let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
        if !runtime.block_on(doctor::run(&config)) {
            std::process::exit(1);
        }
        return Ok(());
    }
    // Verifying needs no deployment: an export and the keys trusted.
    if let Command::Verify { file, keys, receipt } = &cli.command {
        if !seal::verify(file, keys, receipt.as_deref())? {
            std::process::exit(1);
        }
        return Ok(());
    }
    let config = Config::load(cli.config.as_deref())?;
    match cli.command {
        Command::SealKey => seal::print_key(&config),
        Command::Config => {
            print!("{}", config.printable());
            Ok(())
        }
        Command::Healthcheck { path } => healthcheck::check(config.http_addr, &path),
        Command::Token { tenant, user, role, agent } => {
            let auth = lattice_log::Authenticator::new(&config.secret()?, Duration::from_secs(config.token_ttl_secs))?;
            let principal = Principal {
                tenant: TenantId::parse("tenant", &tenant)?,
                user: UserId::parse("user", &user)?,
                role: match role {
                    RoleArg::Member => TenantRole::Member,
                    RoleArg::TenantAdmin => TenantRole::TenantAdmin,
                    RoleArg::DeploymentAdmin => TenantRole::DeploymentAdmin,
                },
                agent,
                run: None,
                within: None,
                scope: None,
            };
            println!("{}", auth.mint(&principal));
            Ok(())
        }
        command => {
            let service = match &command {
                Command::Serve { service } => format!("lattice-{}", service.name()),
                Command::Up => "lattice-up".into(),
                Command::Mcp { .. } => "lattice-mcp-stdio".into(),
                _ => "lattice".into(),
            };
            let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
            // Kept until the command ends: dropping it flushes the last spans and metrics.
            let _telemetry = telemetry::init(&config, matches!(command, Command::Mcp { .. }), &service)?;
            runtime.block_on(async move {
                match command {
                    Command::Migrate => serve::migrate(&config).await,
                    Command::Switch { action: SwitchAction::Set { level, key, state, reason } } => {
                        switch::set(&config, &level, &key, &state, reason).await
                    }
                    Command::Switch { action: SwitchAction::List { level } } => switch::list(&config, level.as_deref()).await,
                    Command::SignOut { tenant, user } => sign_out::run(&config, &tenant, &user).await,
                    Command::Export { tenant, workspace, out } => {
                        seal::export(&config, tenant.as_deref(), workspace.as_deref(), out.as_deref()).await
                    }
                    Command::Up => serve::up(config).await,
                    Command::Serve { service: Service::Log } => serve::log(config).await,
                    Command::Serve { service: Service::Bridge } => serve::bridge(config).await,
                    Command::Serve { service: Service::Edge } => serve::edge(config).await,
                    Command::Serve { service: Service::Mcp } => serve::mcp(config).await,
                    Command::Mcp { stdio, token } => {
                        anyhow::ensure!(stdio, "lattice mcp speaks over stdio only: pass --stdio (HTTP is /mcp of lattice up)");
                        serve::mcp_stdio(config, &token).await
                    }
                    Command::Config
                    | Command::Token { .. }
                    | Command::Healthcheck { .. }
                    | Command::Doctor
                    | Command::Verify { .. }
                    | Command::SealKey => unreachable!("handled above"),
                }
            })
        }
    }
}
